package manual

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A row of the resolution table: one step of one make validate-ab run
// (one rxevm setting, for the boots step).
type row struct {
	rank       int // the step's place in the table: duets, interleaved runs, boots
	date       string
	comparison string
	check      string
	result     string
	load       string
	when       string
	command    string
}

// The steps, in the order the table lists them.
const (
	rankKernelAB = iota
	rankKernelAA
	rankWorkAB
	rankWorkAA
	rankDuetAB
	rankDuetAA
	rankAB
	rankAA
	rankBoots
)

// validate-ab.sh's defaults for the duet steps: the command a row names
// spells out only the variables a run set otherwise.
const (
	defaultDuetPairs     = "80"
	defaultDuetBenchtime = "2000x"
	defaultBurst         = "200"
	defaultDelayNS       = "800"
	defaultBootCount     = "6"
	defaultBenchtime     = "5000x"
	defaultWorkRuns      = "3"
	defaultWorkBenchtime = "500x"
	defaultExtraInsns    = "70"
)

// Bounds on a figures file: validate-ab writes a few KiB.
const (
	maxFiguresBytes = 1 << 20
	maxLineBytes    = 64 << 10
)

var (
	reHeader  = regexp.MustCompile(`^rdmaab validation, (\d{4}-\d{2}-\d{2})T[^,]*, commit (\w+)`)
	reDone    = regexp.MustCompile(`^done \d{4}-`)
	load      = `\((\d+) s, host load ([0-9.]+-[0-9.]+)`
	reAA      = regexp.MustCompile(`^A/A, one boot, (\d+) trials x (\d+) interleaved pairs, sizes (\S+), (\S+) ` + load)
	reAB      = regexp.MustCompile(`^A/B, one boot, \+(\d+) ns per round trip \(\+\d+ ns one-way\), (\d+) trials x (\d+) pairs ` + load)
	reDuet    = regexp.MustCompile(`^Duet (A/A|A/B)(?:, \+(\d+) ns per round trip)?, one boot, (\d+) trials of at most (\d+) duet pairs, (\S+) B, (\S+), turns of (\d+), noise (\d) \(seed \d+\) ` + load)
	reDrift   = regexp.MustCompile(`^Drift across boots: (\d+) boots per setting, (\d+) runs of 2 B x (\S+) each`)
	reFlagged = regexp.MustCompile(`benchstat flagged (\d+) of (\d+) time-metric comparisons \(([0-9.]+)%`)
	reAAGate  = regexp.MustCompile(`the gate \([^)]*\) failed (\d+) of (\d+) trials`)
	reABUnits = regexp.MustCompile(`^\s+sec/op \d+/\d+`)
	reUnit    = regexp.MustCompile(`(\S+) (\d+)/(\d+)`)
	reDuetVer = regexp.MustCompile(`the gate \(paired verdict, ([^,]+), threshold ([^)]+)\): failed (\d+), passed (\d+), undecided (\d+) of (\d+)`)
	rePairs   = regexp.MustCompile(`(?:stopped after|ran) (\d+) duet pairs`)
	reGuest   = regexp.MustCompile(`guest time (\d+) s`)
	reMode    = regexp.MustCompile(`^  (\S+) \(([^)]*)\)`)
	reSpread  = regexp.MustCompile(`(p50|min) per boot \(median of \d+ runs, ns\): [^>]*-> spread ([0-9.]+)%[^,]*, median (\d+) ns`)
	reLoads   = regexp.MustCompile(`(?m)host load per boot \(start-end\): (.*)$`)
	reNumber  = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?`)
	reWork    = regexp.MustCompile(`^Work (A/A|A/B)(?:, \+(\d+) instructions per round trip \(-DRB_EXTRA_INSNS=(\d+)\))?, one boot of rxevm -insns, (\d+) trials of (\d+) interleaved runs a side, (\S+) 2 B, (\S+), noise (\d) \(seed \d+\) ` + load)
	reWorkVer = regexp.MustCompile(`the gate on work \([^)]*\): failed (\d+), passed (\d+), undecided (\d+), could not judge (\d+) of (\d+)`)
	reWorkSpr = regexp.MustCompile(`^  (old|new) side, every run: user-insns/op \S+ \(([0-9.]+)%, \d+ runs\); kernel-insns/op \S+ \(([0-9.]+)%, \d+ runs\)`)
	reWorkTop = regexp.MustCompile(`top of the diff: \S+ \(test binary\) (\S+) \+`)
)

// errFormat says a figures file is not in the format this parser knows:
// validate-ab.sh changed its lines, and the parser must follow.
var errFormat = errors.New("not a figures line this parser knows")

// step gathers one step's lines until the next step starts.
type step struct {
	rank   int
	head   []string // the step header's submatches
	lines  []string
	date   string
	commit string
}

// parseFigures reads one figures.txt of make validate-ab and returns a
// row per step (per rxevm setting for boots). An unknown unindented line,
// a step without its summary, or a file over the bounds is an error.
func parseFigures(r io.Reader) ([]row, error) {
	sc := bufio.NewScanner(io.LimitReader(r, maxFiguresBytes+1))
	sc.Buffer(make([]byte, 4096), maxLineBytes)
	var (
		date, commit string
		steps        []*step
		cur          *step
		read         int
	)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		read += len(line) + 1
		if read > maxFiguresBytes {
			return nil, fmt.Errorf("figures file over %d bytes", maxFiguresBytes)
		}
		if line == "" || strings.HasPrefix(line, " ") {
			if cur != nil {
				cur.lines = append(cur.lines, line)
			}
			continue
		}
		var m []string
		rank := -1
		switch {
		case reHeader.MatchString(line):
			m = reHeader.FindStringSubmatch(line)
			date, commit = m[1], m[2]
			cur = nil
			continue
		case reDone.MatchString(line):
			cur = nil
			continue
		case reAA.MatchString(line):
			m, rank = reAA.FindStringSubmatch(line), rankAA
		case reAB.MatchString(line):
			m, rank = reAB.FindStringSubmatch(line), rankAB
		case reDuet.MatchString(line):
			m, rank = reDuet.FindStringSubmatch(line), rankDuetAA
			if m[1] == "A/B" {
				rank = rankDuetAB
			}
		case reWork.MatchString(line):
			m, rank = reWork.FindStringSubmatch(line), rankWorkAA
			if m[1] == "A/B" {
				rank = rankWorkAB
			}
		case reKernel.MatchString(line):
			m, rank = reKernel.FindStringSubmatch(line), rankKernelAA
			if m[1] == "A/B" {
				rank = rankKernelAB
			}
		case reDrift.MatchString(line):
			m, rank = reDrift.FindStringSubmatch(line), rankBoots
		default:
			return nil, fmt.Errorf("line %d: %q: %w", n, line, errFormat)
		}
		if date == "" {
			return nil, fmt.Errorf("line %d: a step before the \"rdmaab validation\" header: %w", n, errFormat)
		}
		cur = &step{rank: rank, head: m, date: date, commit: commit}
		steps = append(steps, cur)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var rows []row
	for _, s := range steps {
		rs, err := s.rows()
		if err != nil {
			return nil, err
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

func (s *step) rows() ([]row, error) {
	r := row{rank: s.rank, date: s.date, when: s.date + ", " + s.commit}
	h := s.head
	find := func(re *regexp.Regexp) []string {
		for _, l := range s.lines {
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		}
		return nil
	}
	missing := func(what string) error {
		return fmt.Errorf("%s step of %s (%s): no %s line: %w", strings.TrimSuffix(strings.Fields(h[0])[0], ","), s.date, s.commit, what, errFormat)
	}
	switch s.rank {
	case rankAA:
		trials, pairs, sizes, bt := h[1], h[2], h[3], h[4]
		f, g := find(reFlagged), find(reAAGate)
		if f == nil || g == nil {
			return nil, missing("benchstat or gate summary")
		}
		r.comparison = fmt.Sprintf("interleaved runs, %s pairs of %s, sizes %s", pairs, bt, sizes)
		r.check = "A/A, the same build"
		r.result = fmt.Sprintf("benchstat flagged %s of %s time-metric comparisons (%s%%); the gate failed %s of %s trials", f[1], f[2], f[3], g[1], g[2])
		r.load = h[6]
		r.command = fmt.Sprintf("`STEPS=aa TRIALS=%s PAIRS=%s make validate-ab`", trials, pairs)
	case rankAB:
		delay, trials, pairs := h[1], h[2], h[3]
		i := slices.IndexFunc(s.lines, reABUnits.MatchString)
		if i < 0 {
			return nil, missing("per-metric summary")
		}
		found := map[string]string{}
		for _, m := range reUnit.FindAllStringSubmatch(s.lines[i], -1) {
			found[m[1]] = m[2] + " of " + m[3]
		}
		if found["p50-sec"] == "" || found["min-sec"] == "" {
			return nil, missing("p50-sec and min-sec")
		}
		r.comparison = fmt.Sprintf("interleaved runs, %s pairs", pairs)
		r.check = fmt.Sprintf("A/B, +%s ns a round trip", delay)
		r.result = fmt.Sprintf("found slower at 2 B: p50 in %s trials, min in %s", found["p50-sec"], found["min-sec"])
		r.load = h[5]
		r.command = fmt.Sprintf("`STEPS=ab TRIALS=%s PAIRS=%s DELAY_NS=%s make validate-ab`", trials, pairs, delay)
	case rankDuetAA, rankDuetAB:
		kind, delay, trials, maxPairs, bt, burst, noise := h[1], h[2], h[3], h[4], h[6], h[7], h[8]
		v := find(reDuetVer)
		if v == nil {
			return nil, missing("gate summary")
		}
		metric, failed, passed, undecided := v[1], v[3], v[4], v[5]
		var pairs, guest, est []float64
		reEst := regexp.MustCompile(regexp.QuoteMeta(metric) + `: \w+: ([+-][0-9.]+)%`)
		for _, l := range s.lines {
			if m := rePairs.FindStringSubmatch(l); m != nil {
				pairs = append(pairs, number(m[1]))
			}
			if m := reGuest.FindStringSubmatch(l); m != nil {
				guest = append(guest, number(m[1]))
			}
			if m := reEst.FindStringSubmatch(l); m != nil {
				est = append(est, number(m[1]))
			}
		}
		if len(pairs) == 0 || len(guest) == 0 || len(est) == 0 {
			return nil, missing("per-trial")
		}
		r.comparison = fmt.Sprintf("duet, up to %s pairs of %s, turns of %s", maxPairs, bt, burst)
		if kind == "A/B" {
			r.check = fmt.Sprintf("A/B, +%s ns a round trip", delay)
			r.result = fmt.Sprintf("found (gate failed) in **%s of %s**, passed %s, undecided %s", failed, trials, passed, undecided)
		} else {
			r.check = "A/A, the same build"
			r.result = fmt.Sprintf("**passed %s**, failed %s, undecided %s of %s", passed, failed, undecided, trials)
		}
		if noise == "1" {
			r.check += ", seeded co-tenant noise"
		}
		r.result += fmt.Sprintf("; %s estimates %s; %s pairs, %s guest s a trial", metric,
			span(est, "%+.2f%%"), span(pairs, "%.0f"), span(guest, "%.0f"))
		r.load = h[10]
		step := "duet-aa"
		if kind == "A/B" {
			step = "duet-ab"
		}
		cmd := fmt.Sprintf("STEPS=%s TRIALS=%s", step, trials)
		if noise == "1" {
			cmd += " NOISE=1"
		}
		cmd += unlessDefault([][3]string{{"DUET_PAIRS", maxPairs, defaultDuetPairs}, {"DUET_BENCHTIME", bt, defaultDuetBenchtime}, {"BURST", burst, defaultBurst}})
		if kind == "A/B" {
			cmd += unlessDefault([][3]string{{"DELAY_NS", delay, defaultDelayNS}})
		}
		r.command = "`" + cmd + " make validate-ab`"
	case rankWorkAA, rankWorkAB:
		return s.workRow(r)
	case rankKernelAA, rankKernelAB:
		return s.kernelRow(r)
	case rankBoots:
		boots, runs, bt := h[1], h[2], h[3]
		var rows []row
		for i := 0; i < len(s.lines); i++ {
			m := reMode.FindStringSubmatch(s.lines[i])
			if m == nil {
				continue
			}
			mode, flags := m[1], m[2]
			// The mode's lines: its own and the indented ones under it.
			block := s.lines[i]
			for i+1 < len(s.lines) && strings.HasPrefix(s.lines[i+1], "    ") {
				i++
				block += "\n" + s.lines[i]
			}
			var parts []string
			for _, sp := range reSpread.FindAllStringSubmatch(block, -1) {
				parts = append(parts, fmt.Sprintf("%s per boot spread %s%% (median %s ns)", sp[1], sp[2], sp[3]))
			}
			lm := reLoads.FindStringSubmatch(block)
			if len(parts) == 0 || lm == nil {
				return nil, fmt.Errorf("boots step of %s, setting %s: no spread or load line: %w", s.date, mode, errFormat)
			}
			loads := numbers(lm[1])
			br := r
			br.comparison = "across boots, rxevm " + flags
			br.check = fmt.Sprintf("the same build, %s boots of %s runs of %s", boots, runs, bt)
			br.result = strings.Join(parts, "; ")
			br.load = span(loads, "%.1f")
			br.command = fmt.Sprintf("`STEPS=boots BOOTS=%s BOOT_MODES=%s%s make validate-ab`", boots, mode,
				unlessDefault([][3]string{{"BOOTCOUNT", runs, defaultBootCount}, {"BENCHTIME", bt, defaultBenchtime}}))
			rows = append(rows, br)
		}
		if len(rows) == 0 {
			return nil, missing("boot setting")
		}
		return rows, nil
	}
	return []row{r}, nil
}

// workRow is the row of a work step: the gate's pass counts, the spread
// of user and kernel work over every run, the guest time of a trial and,
// for A/B, how often the diff's top function was the one that grew.
func (s *step) workRow(r row) ([]row, error) {
	h := s.head
	kind, added, extra, trials, runs, bench, bt, noise := h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]
	var v []string
	var user, kernel, guest []float64
	top := map[string]int{}
	for _, l := range s.lines {
		if m := reWorkVer.FindStringSubmatch(l); m != nil {
			v = m
		}
		if m := reWorkSpr.FindStringSubmatch(l); m != nil {
			user, kernel = append(user, number(m[2])), append(kernel, number(m[3]))
		}
		if m := reGuest.FindStringSubmatch(l); m != nil {
			guest = append(guest, number(m[1]))
		}
		if m := reWorkTop.FindStringSubmatch(l); m != nil {
			top[m[1]]++
		}
	}
	if v == nil || len(user) == 0 || len(guest) == 0 {
		return nil, fmt.Errorf("work step of %s (%s): no gate summary, spread or per-trial line: %w", s.date, s.commit, errFormat)
	}
	failed, passed, undecided, total := v[1], v[2], v[3], v[5]
	r.comparison = fmt.Sprintf("work (rxevm -insns), %s interleaved runs a side of %s, %s 2 B", runs, bt, bench)
	step := "work-aa"
	if kind == "A/B" {
		step = "work-ab"
		r.check = fmt.Sprintf("A/B, +%s instructions a round trip", added)
		r.result = fmt.Sprintf("found (gate failed) in **%s of %s**, passed %s, undecided %s", failed, total, passed, undecided)
		var fns []string
		for _, f := range slices.Sorted(maps.Keys(top)) {
			fns = append(fns, fmt.Sprintf("%s in %d", f, top[f]))
		}
		r.result += "; the diff's top function " + strings.Join(fns, ", ")
	} else {
		r.check = "A/A, the same build"
		r.result = fmt.Sprintf("**passed %s**, failed %s, undecided %s of %s", passed, failed, undecided, total)
	}
	if noise == "1" {
		r.check += ", seeded co-tenant noise"
	}
	r.result += fmt.Sprintf("; spread of a side's runs: user-insns/op %s, kernel-insns/op %s; %s guest s a trial",
		span(user, "%.3f%%"), span(kernel, "%.2f%%"), span(guest, "%.0f"))
	r.load = h[10]
	cmd := fmt.Sprintf("STEPS=%s TRIALS=%s", step, trials)
	if noise == "1" {
		cmd += " NOISE=1"
	}
	cmd += unlessDefault([][3]string{{"WORK_RUNS", runs, defaultWorkRuns}, {"WORK_BENCHTIME", bt, defaultWorkBenchtime}})
	if kind == "A/B" {
		cmd += unlessDefault([][3]string{{"EXTRA_INSNS", extra, defaultExtraInsns}})
	}
	r.command = "`" + cmd + " make validate-ab`"
	return []row{r}, nil
}

// unlessDefault spells out each {variable, value, default} whose value
// is not the default, as " NAME=value".
func unlessDefault(vars [][3]string) string {
	var s string
	for _, v := range vars {
		if v[1] != v[2] {
			s += " " + v[0] + "=" + v[1]
		}
	}
	return s
}

func number(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64) // the regexps admit numbers only
	return f
}

func numbers(s string) []float64 {
	var fs []float64
	for _, m := range reNumber.FindAllString(s, -1) {
		fs = append(fs, number(m))
	}
	return fs
}

// span prints the range of vs as "lo-hi" ("lo to hi" where the format
// prints a sign), or one value when all print alike.
func span(vs []float64, format string) string {
	lo, hi := slices.Min(vs), slices.Max(vs)
	if fmt.Sprintf(format, lo) == fmt.Sprintf(format, hi) {
		return fmt.Sprintf(format, lo)
	}
	sep := "-"
	if strings.Contains(format, "%+") {
		sep = " to "
	}
	return fmt.Sprintf(format, lo) + sep + fmt.Sprintf(format, hi)
}

// render prints the resolution table, rows ordered by step, then date.
func render(rows []row) string {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b row) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return strings.Compare(a.date, b.date)
	})
	var b strings.Builder
	b.WriteString("| comparison | check | result | host load | date, commit | command |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.comparison, r.check, r.result, r.load, r.when, r.command)
	}
	return b.String()
}
