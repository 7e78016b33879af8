package abrun

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/texttest"
	"github.com/rdmabench/rdmabench/internal/turn"
)

// fakeDuet is the fake benchmark under a conductor: a warm-up turn, then
// $FAKE_BURSTS turns (10; $FAKE_NEW_BURSTS on the new side), each a burst
// whose median is 10 us times $FAKE_NEW_FACTOR on the new side, times the
// host's speed: 1 or 2, switching every third turn, which both processes'
// turns of one round see alike, as on a shared host whose speed changes
// more slowly than a round. (Not by the wall clock: on a loaded machine a
// turn's hand-over may take longer than any period chosen.)
func fakeDuet(side string, args []string) int {
	c, err := turn.FromEnv(10 * time.Second)
	if err != nil || c == nil {
		fmt.Fprintln(os.Stderr, "fake duet:", err)
		return 1
	}
	factor := 1.0
	n := 10
	if v, err := strconv.Atoi(os.Getenv("FAKE_BURSTS")); err == nil {
		n = v
	}
	if side == "new" {
		if v, err := strconv.ParseFloat(os.Getenv("FAKE_NEW_FACTOR"), 64); err == nil {
			factor = v
		}
		if v, err := strconv.Atoi(os.Getenv("FAKE_NEW_BURSTS")); err == nil {
			n = v
		}
	}
	if _, err := c.Acquire(); err != nil {
		fmt.Fprintln(os.Stderr, "fake duet:", err)
		return 1
	}
	c.Release(turn.Burst{Kind: turn.KindWarmup, Label: "run", Run: 1, N: 100})
	var meds []float64
	for seq := 1; seq <= n; seq++ {
		k, err := c.Acquire()
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake duet:", err)
			return 1
		}
		level := 1.0
		if seq/3%2 == 1 {
			level = 2
		}
		med := 10000 * factor * level
		meds = append(meds, med)
		time.Sleep(time.Millisecond)
		c.Release(turn.Burst{Kind: turn.KindBurst, Label: "BenchmarkRDMAWrite/size=2", Run: 1, Seq: seq, N: k, Median: int64(med), Min: int64(med * 0.9)})
	}
	slices.Sort(meds)
	p50 := meds[len(meds)/2]
	fmt.Printf("goos: linux\npkg: fake\nrdma-device: rxe0\nBenchmarkRDMAWrite/size=2-4\t1000\t%.0f ns/op\t%.0f min-ns\t%.0f p50-ns\t%.0f p99-ns\n",
		p50*1.1, p50*0.9, p50, p50*3)
	// A benchmark that times itself, taking no turns, $FAKE_SELF_FACTOR
	// times slower on the new side.
	if f, err := strconv.ParseFloat(os.Getenv("FAKE_SELF_FACTOR"), 64); err == nil {
		self := 1000.0
		if side == "new" {
			self *= f
		}
		fmt.Printf("BenchmarkSelfTimed-4\t1000\t%.0f ns/op\t%.0f p50-ns\n", self, self)
	}
	fmt.Println("PASS")
	return 0
}

// sidesOfTurns returns the sides of bursts.txt's burst lines in order.
func sidesOfTurns(t *testing.T, out string) []string {
	t.Helper()
	bs, err := readBurstsFile(filepath.Join(out, burstsFile))
	if err != nil {
		t.Fatal(err)
	}
	var sides []string
	for _, b := range bs {
		if b.b.Kind == turn.KindBurst && b.pair == 1 {
			sides = append(sides, b.side.String())
		}
	}
	return sides
}

func TestDuetFindsSmallChange(t *testing.T) {
	old, new, dir := fakes(t)
	t.Setenv("FAKE_NEW_FACTOR", "1.03")
	t.Setenv("FAKE_BURSTS", "30")
	out := filepath.Join(dir, "out")
	code, stdout, stderr := compare(t, local(out, true), "-count", "4", "-burst", "150", "-seed", "7", "-paired", "t", "-metrics", "p50-ns,min-ns", "-threshold", "1%", old, new)
	if code != ExitRegressed {
		t.Fatalf("status %d, want %d\n%s\n%s", code, ExitRegressed, stdout, stderr)
	}
	texttest.ContainsAll(t, "stdout", stdout,
		"ran as duet: both sides' processes alive at once, taking turns of 150 round trips",
		"FAIL BenchmarkRDMAWrite/size=2 p50-ns: different: +3.00% [+3.00%, +3.00%] (paired t-test, 3 rounds, p=0)",
		"FAIL BenchmarkRDMAWrite/size=2 min-ns: different",
		"per duet pair (median of its turns): +3.0% +3.0% +3.0%",
		"stopped after 3 duet pairs of at most 4 (-count): the paired verdict on p50-ns,min-ns is different",
		"paired: FAIL",
	)
	// Turns in ABBA order: the warm-ups took round 1 (old, new), so the
	// bursts start at round 2 (new, old); both processes ran at once.
	sides := sidesOfTurns(t, out)
	want := []string{"new", "old", "old", "new", "new", "old", "old", "new"}
	if len(sides) != 60 || !slices.Equal(sides[:8], want) {
		t.Errorf("turns of pair 1: %v, want 60 starting %v", sides, want)
	}
	order, _ := os.ReadFile(filepath.Join(out, "order.txt"))
	o1, o3 := startOrder(7, 1), startOrder(7, 3)
	wantOrder := fmt.Sprintf("seed 7 (-seed: the pairs' start order)\npair 1 duet, %s started first\npair 2 duet, %s started first\npair 3 duet, %s started first\n", o1[0], o1[1], o3[0])
	if string(order) != wantOrder {
		t.Errorf("order.txt:\n%s\nwant:\n%s", order, wantOrder)
	}
	oldTxt, _ := os.ReadFile(filepath.Join(out, "old.txt"))
	if n := strings.Count(string(oldTxt), "BenchmarkRDMAWrite/size=2-4"); n != 3 {
		t.Errorf("old.txt has %d results, want 3:\n%s", n, oldTxt)
	}
}

// The default paired test ranks the pairs: with every pair at +3% it
// decides as soon as the smallest p-value n pairs can give is below the
// looks' flat level at alpha 0.01 (2/2^9 = 0.0039 < 0.0078 for looks 3-10
// at -count 10; 2/2^8 = 0.0078 is not below it).
func TestDuetSignedRankFindsSmallChange(t *testing.T) {
	old, new, dir := fakes(t)
	t.Setenv("FAKE_NEW_FACTOR", "1.03")
	t.Setenv("FAKE_BURSTS", "6")
	out := filepath.Join(dir, "out")
	code, stdout, stderr := compare(t, local(out, true), "-count", "10", "-metrics", "p50-ns", "-threshold", "1%", old, new)
	if code != ExitRegressed {
		t.Fatalf("status %d, want %d\n%s\n%s", code, ExitRegressed, stdout, stderr)
	}
	texttest.ContainsAll(t, "stdout", stdout,
		"FAIL BenchmarkRDMAWrite/size=2 p50-ns: different: +3.00% [+3.00%, +3.00%] (signed-rank test, 9 rounds, p=0.00391)",
		"stopped after 9 duet pairs of at most 10 (-count)",
		"transparent huge pages off for both sides",
	)
}

func TestDuetSameBuildPasses(t *testing.T) {
	old, new, dir := fakes(t)
	t.Setenv("FAKE_BURSTS", "30")
	out := filepath.Join(dir, "out")
	code, stdout, stderr := compare(t, local(out, true), "-count", "3", "-metrics", "p50-ns", "-threshold", "1%", old, new)
	if code != 0 || !strings.Contains(stdout, "p50-ns: same: +0.00%") || !strings.Contains(stdout, "paired: pass") {
		t.Errorf("status %d\n%s\n%s", code, stdout, stderr)
	}
	// p99 is not in a burst's summary: gated, it is judged over the runs,
	// and the duet runs every pair.
	code, stdout, stderr = compare(t, local(out, true), "-count", "3", "-metrics", "p50-ns,p99-ns", old, new)
	for _, s := range []string{"ran 3 duet pairs (-count 3)", "p50-ns: same", "gate: UNDECIDED"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("p50 and p99: stdout lacks %q (status %d):\n%s\n%s", s, code, stdout, stderr)
		}
	}
	if code != ExitUndecided {
		t.Errorf("p99 over 3 runs: status %d, want %d", code, ExitUndecided)
	}
}

func TestDuetOneSideEndsFirst(t *testing.T) {
	old, new, dir := fakes(t)
	t.Setenv("FAKE_BURSTS", "12")
	t.Setenv("FAKE_NEW_BURSTS", "4")
	out := filepath.Join(dir, "out")
	code, stdout, stderr := compare(t, local(out, false), "-count", "1", "-metrics", "p50-ns", old, new)
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, stdout, stderr)
	}
	sides := sidesOfTurns(t, out)
	if got := strings.Join(sides, " "); got != "new old old new new old old new old old old old old old old old" {
		t.Errorf("turns: %s", got)
	}
	// One pair of processes decides nothing: the verdict needs 3.
	if !strings.Contains(stdout, "p50-ns: undecided") || !strings.Contains(stdout, "per duet pair (median of its turns): +0.0%") {
		t.Errorf("want an undecided verdict over one pair:\n%s", stdout)
	}
}

func TestDuetFallsBackForOldBinaries(t *testing.T) {
	_, new, dir := fakes(t)
	// A benchmark binary built before turn-taking: it never heard of the
	// conductor's socket.
	legacy := filepath.Join(dir, "legacy.test")
	script := "#!/bin/sh\nprintf 'rdma-device: rxe0\\nBenchmarkRDMAWrite/size=2-4\\t1000\\t11000 ns/op\\t10000 p50-ns\\nPASS\\n'\n"
	if err := os.WriteFile(legacy, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := compare(t, local(out, false), "-count", "2", "-metrics", "p50-ns", legacy, new)
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, stdout, stderr)
	}
	want := "ran as interleaved runs: the old side's binary " + legacy + " predates turn-taking (it lacks " + turn.Version + ")"
	if !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout)
	}
	if _, err := os.Stat(filepath.Join(out, burstsFile)); err == nil {
		t.Errorf("%s written for an interleaved comparison", burstsFile)
	}
	if order, _ := os.ReadFile(filepath.Join(out, "order.txt")); string(order) != "pair 1 old\npair 1 new\npair 2 new\npair 2 old\n" {
		t.Errorf("order.txt:\n%s", order)
	}
}

// The start order is balanced in blocks of two pairs, reproducible from
// its seed, and not a fixed alternation.
func TestStartOrder(t *testing.T) {
	const pairs = 80
	var seq [2][pairs]abtest.Side
	for k, seed := range []uint64{1, 2} {
		for p := 1; p <= pairs; p++ {
			o := startOrder(seed, p)
			if o[0] == o[1] {
				t.Fatalf("seed %d pair %d: %v starts one side twice", seed, p, o)
			}
			if o != startOrder(seed, p) {
				t.Fatalf("seed %d pair %d: not reproducible", seed, p)
			}
			seq[k][p-1] = o[0]
			if p%2 == 0 && seq[k][p-2] == o[0] {
				t.Errorf("seed %d pairs %d-%d: %v started first in both", seed, p-1, p, o[0])
			}
		}
	}
	if seq[0] == seq[1] {
		t.Error("seeds 1 and 2 give the same start order")
	}
	// Under a fixed alternation pair p and p+2 always start alike; here
	// about half of them do.
	for k := range seq {
		alike := 0
		for p := 0; p+2 < pairs; p++ {
			if seq[k][p] == seq[k][p+2] {
				alike++
			}
		}
		if alike < 20 || alike > 58 {
			t.Errorf("seed %d: pairs p and p+2 started alike %d times of %d, want about half", k+1, alike, pairs-2)
		}
	}
}

func TestReadBurstsRejectsBadLines(t *testing.T) {
	for _, bad := range []string{"1 old burst 1 1 200 10 9 5", "1 mid burst 1 1 200 10 9 5 X", "x old burst 1 1 200 10 9 5 X"} {
		if _, err := readBursts(strings.NewReader(bad + "\n")); err == nil || !strings.Contains(err.Error(), "want <pair>") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	bs, err := readBursts(strings.NewReader("2 new burst 3 4 200 25000 21000 1234 BenchmarkRDMAWrite/size=2\n"))
	if err != nil || len(bs) != 1 || bs[0].pair != 2 || bs[0].side != abtest.New || bs[0].b.Median != 25000 || bs[0].atUS != 1234 {
		t.Errorf("%+v, %v", bs, err)
	}
}
