package abrun

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/turn"
)

// burstsFile holds a duet's done lines, one a line:
//
//	<pair> <side> <kind> <run> <seq> <n> <median_ns> <min_ns> <µs since the pair began> <label>
const burstsFile = "bursts.txt"

// A burstRec is one line of bursts.txt.
type burstRec struct {
	pair int
	side abtest.Side
	b    turn.Burst
	atUS int64
}

func readBursts(r io.Reader) ([]burstRec, error) {
	var out []burstRec
	sc := bufio.NewScanner(r)
	for ln := 1; sc.Scan(); ln++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		bad := fmt.Errorf("%s line %d: %q: want <pair> old|new <kind> <run> <seq> <n> <median> <min> <µs> <label>", burstsFile, ln, sc.Text())
		if len(f) != 10 || (f[1] != "old" && f[1] != "new") {
			return nil, bad
		}
		var n [7]int64
		for i, j := range []int{0, 3, 4, 5, 6, 7, 8} {
			v, err := strconv.ParseInt(f[j], 10, 64)
			if err != nil {
				return nil, bad
			}
			n[i] = v
		}
		side := abtest.Old
		if f[1] == "new" {
			side = abtest.New
		}
		out = append(out, burstRec{pair: int(n[0]), side: side, atUS: n[6],
			b: turn.Burst{Kind: f[2], Run: int(n[1]), Seq: int(n[2]), N: int(n[3]), Median: n[4], Min: n[5], Label: f[9]}})
	}
	return out, sc.Err()
}

func readBurstsFile(name string) ([]burstRec, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBursts(f)
}

// burstUnits maps the gate's units that a burst's summary covers to the
// summary's field.
var burstUnits = map[string]func(turn.Burst) int64{
	"p50-ns": func(b turn.Burst) int64 { return b.Median },
	"min-ns": func(b turn.Burst) int64 { return b.Min },
}

// coveredUnits splits units into those the bursts judge and the rest.
func coveredUnits(units []string) (covered, rest []string) {
	for _, u := range units {
		if burstUnits[u] != nil {
			covered = append(covered, u)
		} else {
			rest = append(rest, u)
		}
	}
	return covered, rest
}

// burstRounds pairs each old burst with the new burst of the same duet
// pair, label, run and turn number, and returns the rounds of each
// "label unit" in order, for the covered units.
func burstRounds(bs []burstRec, units []string) (names []string, rounds map[string][]abtest.Round) {
	type key struct {
		pair     int
		label    string
		run, seq int
	}
	var got [2]map[key]turn.Burst
	got[0], got[1] = map[key]turn.Burst{}, map[key]turn.Burst{}
	var order []key
	for _, r := range bs {
		if r.b.Kind != turn.KindBurst || r.b.N == 0 {
			continue
		}
		k := key{r.pair, r.b.Label, r.b.Run, r.b.Seq}
		if _, seen := got[0][k]; !seen {
			if _, seen := got[1][k]; !seen {
				order = append(order, k)
			}
		}
		got[r.side][k] = r.b
	}
	rounds = map[string][]abtest.Round{}
	covered, _ := coveredUnits(units)
	for _, k := range order {
		o, okO := got[0][k]
		n, okN := got[1][k]
		if !okO || !okN {
			continue
		}
		for _, u := range covered {
			name := k.label + " " + u
			if _, ok := rounds[name]; !ok {
				names = append(names, name)
			}
			f := burstUnits[u]
			rounds[name] = append(rounds[name], abtest.Round{Old: float64(f(o)), New: float64(f(n))})
		}
	}
	slices.SortStableFunc(names, cmp.Compare)
	return names, rounds
}

// The duet's paired verdict takes each pair of processes as one value,
// the median log ratio of its paired turns, not the turns themselves: in
// the soft-RoCE VM a process carries an offset of its own, stable over all
// its turns (an A/A pair read 24.1 and 22.7 µs turn after turn; no offset
// of address layout or start order), so turns of one pair are not
// independent evidence, and a test over them flags an A/A. Pairs of
// processes are. A benchmark that takes no turns gives its pair's runs
// (duetMetrics).

// pairMedians returns, per duet pair, the median log ratio of a name's
// rounds: the spread of these across pairs shows any offset a process
// carries as a whole (its memory placement), which turns cannot cancel.
func pairMedians(bs []burstRec, name string, units []string) []float64 {
	var out []float64
	pairs := map[int]bool{}
	for _, r := range bs {
		pairs[r.pair] = true
	}
	for p := 1; p <= len(pairs); p++ {
		var sub []burstRec
		for _, r := range bs {
			if r.pair == p {
				sub = append(sub, r)
			}
		}
		_, rounds := burstRounds(sub, units)
		lr := abtest.LogRatios(rounds[name])
		if len(lr) == 0 {
			continue
		}
		slices.Sort(lr)
		out = append(out, lr[len(lr)/2])
	}
	return out
}

// printPaired prints the paired verdict of a duet's metrics and returns
// its findings.
func printPaired(w io.Writer, ms []pairedMetric, rule abtest.SequentialRule) []abtest.PairedFinding {
	fs := decideMetrics(rule, ms)
	printFindings(w, rule, fs, "duet pairs", "each pair's log ratio new/old: the median of its turns where the benchmark takes turns, of its runs' values where it does not", ms)
	return fs
}

// printFindings prints a paired verdict's findings over units (duet
// pairs, boot pairs), each with its per-unit values and the way they were
// taken.
func printFindings(w io.Writer, rule abtest.SequentialRule, fs []abtest.PairedFinding, units, what string, ms []pairedMetric) {
	fmt.Fprintf(w, "paired verdict over the %s (%s of %s; different when p < %.3g at any look, the level that holds the false alarms over all looks to %g, Holm across metrics; same when the %.1f%% interval lies within ±%g%%):\n",
		units, rule.Method, what, rule.LookAlpha(), rule.Alpha, 100*(1-rule.LookAlpha()), rule.Threshold*100)
	for i, f := range fs {
		tag := "    "
		if f.Regressed {
			tag = "FAIL"
		}
		fmt.Fprintf(w, "%s %s: %s: %s (level %.3g)\n", tag, f.Name, f.Decision, f.Result, f.Alpha)
		if vs := ms[i].lrs; len(vs) > 0 {
			var s []string
			for _, x := range vs {
				s = append(s, fmt.Sprintf("%+.1f%%", 100*(math.Exp(x)-1)))
			}
			fmt.Fprintf(w, "     %s: %s\n", perPairLabel(ms[i].basis), strings.Join(s, " "))
		}
	}
}

// perPairLabel introduces a metric's per-pair values, saying how they
// were taken.
func perPairLabel(b Basis) string {
	switch b {
	case ByTurns:
		return "per duet pair (median of its turns)"
	case ByRuns:
		return "per duet pair (its runs' values: it takes no turns)"
	}
	return "per boot pair"
}

// pairedStatus prints the paired gate's verdict (abtest's Gate) and
// returns the exit status it stands for.
func pairedStatus(w io.Writer, rule abtest.SequentialRule, fs []abtest.PairedFinding) int {
	if len(fs) == 0 {
		fmt.Fprintf(w, "paired: CANNOT JUDGE: no gated metric on both sides\n")
		return ExitFailed
	}
	out, why := rule.Gate(fs)
	switch out {
	case abtest.GateFail:
		fmt.Fprintf(w, "paired: FAIL: %s\n", why)
		return ExitRegressed
	case abtest.GateUndecided:
		fmt.Fprintf(w, "paired: UNDECIDED: %s\n", why)
		return ExitUndecided
	}
	fmt.Fprintf(w, "paired: pass: %s\n", why)
	return 0
}
