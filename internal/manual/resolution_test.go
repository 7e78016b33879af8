package manual

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/env"
)

var update = flag.Bool("update", false, "rewrite the resolution table of docs/validation.md from testdata/figures")

const validationDoc = "../../docs/validation.md"

// The generated table sits between these two lines of docs/validation.md.
const (
	tableStart = "<!-- Generated from make validate-ab's figures files in internal/manual/testdata/figures: add or replace one there, then run go test ./internal/manual -update. -->\n"
	tableEnd   = "<!-- End of the generated table. -->\n"
)

// figuresTable renders every figures file under testdata/figures.
func figuresTable(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "figures", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no figures files under testdata/figures (%v)", err)
	}
	var rows []row
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := parseFigures(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(rs) == 0 {
			t.Fatalf("%s: no step in it", name)
		}
		rows = append(rows, rs...)
	}
	return render(rows)
}

// TestResolutionTable fails when the table of docs/validation.md is not
// the one the figures files give: a figure edited by hand, or a figures
// file added without -update.
func TestResolutionTable(t *testing.T) {
	if os.Getenv(env.VarVM) == "1" {
		t.Skip("skipping in the VM: reads the source tree, which only the host has")
	}
	text, err := os.ReadFile(validationDoc)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := strings.Cut(string(text), tableStart)
	if !ok {
		t.Fatalf("%s lacks the line %q", validationDoc, tableStart)
	}
	_, tail, ok := strings.Cut(rest, tableEnd)
	if !ok {
		t.Fatalf("%s lacks the line %q after the table", validationDoc, tableEnd)
	}
	want := head + tableStart + figuresTable(t) + tableEnd + tail
	if *update {
		if err := os.WriteFile(validationDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != string(text) {
		t.Errorf("%s's resolution table is not the one testdata/figures gives: run go test ./internal/manual -update\nwant:\n%s", validationDoc, figuresTable(t))
	}
}

// A figures file in validate-ab.sh's present format, one step of each
// kind, cut to two trials each.
const sample = `rdmaab validation, 2026-12-05T10:00:00Z, commit abc1234, load 0.50 0.40 0.30 on 2 CPUs

A/A, one boot, 2 trials x 10 interleaved pairs, sizes 2,4096, 5000x (600 s, host load 1.0-2.0 (mean 1.5) on 2 CPUs):
  benchstat flagged 1 of 24 time-metric comparisons (4.2%; goal <= 5%)
  by metric: sec/op 0/4  min-sec 1/4
  the gate (p50, p99; worse by > 5% at p < 0.05) failed 0 of 2 trials
  trial 1: benchstat flagged 1 of 12; gate status 0

A/B, one boot, +800 ns per round trip (+400 ns one-way), 2 trials x 10 pairs (700 s, host load 1.1-2.1 (mean 1.6) on 2 CPUs):
  trials in which benchstat flagged the metric at 2 B as slower (goal: 9 in 10):
    sec/op 1/2 min-sec 2/2 p50-sec 1/2 p90-sec 0/2 p99-sec 0/2 max-sec 0/2
  trial 1: sec/op up min-sec up p50-sec up p90-sec no p99-sec no max-sec no; widest ...

Duet A/B, +800 ns per round trip, one boot, 2 trials of at most 60 duet pairs, 2 B, 2000x, turns of 200, noise 1 (seed 1) (300 s, host load 2.0-4.0 (mean 3.0) on 2 CPUs):
  the gate (paired verdict, p50-ns, threshold 1%): failed 1, passed 0, undecided 1 of 2
  trial 1: gate status 1; stopped after 14 duet pairs of at most 60 (-count): the paired verdict on p50-ns is different; guest time 20 s
    FAIL BenchmarkRDMAWrite/size=2 p50-ns: different: +3.10% [+1.00%, +5.00%] (signed-rank test, 14 rounds, p=0.0001) (level 0.0009)
  trial 2: gate status 3; ran 60 duet pairs (-count 60); the paired verdict on p50-ns: undecided; guest time 90 s
         BenchmarkRDMAWrite/size=2 p50-ns: undecided: +1.50% [-0.10%, +3.00%] (signed-rank test, 60 rounds, p=0.01) (level 0.0009)

Duet A/A, one boot, 2 trials of at most 80 duet pairs, 2 B, 2000x, turns of 200, noise 0 (seed 1) (250 s, host load 1.5-2.5 (mean 2.0) on 2 CPUs):
  the gate (paired verdict, p50-ns, threshold 1%): failed 0, passed 2, undecided 0 of 2
  trial 1: gate status 0; ran 80 duet pairs (-count 80); the paired verdict on p50-ns: undecided; guest time 120 s
         BenchmarkRDMAWrite/size=2 p50-ns: undecided: -0.20% [-1.00%, +0.60%] (signed-rank test, 80 rounds, p=0.5) (level 0.0009)
  trial 2: gate status 0; ran 80 duet pairs (-count 80); the paired verdict on p50-ns: undecided; guest time 130 s
         BenchmarkRDMAWrite/size=2 p50-ns: undecided: +0.40% [-0.40%, +1.20%] (signed-rank test, 80 rounds, p=0.3) (level 0.0009)

Work A/A, one boot of rxevm -insns, 2 trials of 3 interleaved runs a side, RDMAWrite 2 B, 500x, noise 1 (seed 1) (400 s, host load 10.0-14.0 (mean 12.0) on 2 CPUs):
  the gate on work (user-insns/op, kernel-insns/op; abtest.DefaultThresholds): failed 0, passed 2, undecided 0, could not judge 0 of 2
  old side, every run: user-insns/op 829.1-829.2 (0.012%, 6 runs); kernel-insns/op 28059-28653 (2.117%, 6 runs)
  new side, every run: user-insns/op 829.1-829.1 (0.000%, 6 runs); kernel-insns/op 28100-28400 (1.068%, 6 runs)
  trial 1: gate status 0; guest time 150 s; top of the diff: kernel vmlinux update_curr +2.2 insns/op (+25.4%)
    ok   RDMAWrite/size=2-4 user-insns/op: old 829.1 [829.1, 829.1] new 829.1 [829.1, 829.1]: no change, within the 0.1% threshold, ranges overlap
  trial 2: gate status 0; guest time 170 s; top of the diff: 
    ok   RDMAWrite/size=2-4 user-insns/op: old 829.1 [829.1, 829.2] new 829.1 [829.1, 829.1]: no change, within the 0.1% threshold, ranges overlap

Work A/B, +140 instructions per round trip (-DRB_EXTRA_INSNS=70), one boot of rxevm -insns, 2 trials of 3 interleaved runs a side, RDMAWrite 2 B, 500x, noise 1 (seed 1) (420 s, host load 11.0-15.0 (mean 13.0) on 2 CPUs):
  the gate on work (user-insns/op, kernel-insns/op; abtest.DefaultThresholds): failed 2, passed 0, undecided 0, could not judge 0 of 2
  old side, every run: user-insns/op 829.1-829.1 (0.000%, 6 runs); kernel-insns/op 28059-28653 (2.117%, 6 runs)
  new side, every run: user-insns/op 969.1-969.1 (0.000%, 6 runs); kernel-insns/op 28464-28522 (0.204%, 6 runs)
  trial 1: gate status 1; guest time 160 s; top of the diff: user (test binary) rb_write_ping +140.0 insns/op (+191.8%)
    FAIL RDMAWrite/size=2-4 user-insns/op: old 829.1 [829.1, 829.1] new 969.1 [969.1, 969.1]: +16.89% worse, above the 0.1% threshold, ranges apart
  trial 2: gate status 1; guest time 180 s; top of the diff: user (test binary) rb_write_ping +140.0 insns/op (+191.8%)
    FAIL RDMAWrite/size=2-4 user-insns/op: old 829.1 [829.1, 829.1] new 969.1 [969.1, 969.1]: +16.89% worse, above the 0.1% threshold, ranges apart

Kernel work A/A, stock rdma_rxe in two boots (-boots), 2 trials of one boot a side, 3 runs a boot, RDMAWrite 2 B, 500x:
  the gate on work (user-insns/op, kernel-work-insns/op): failed 0, passed 2, undecided 0, could not judge 0 of 2
  trial 1: gate status 0; 429 s wall, load 10.90-16.65; top of the diff: kernel vmlinux rcu_sched_clock_irq +28.1 insns/op (+344.1%)
    ok   RDMAWrite/size=2-4 user-insns/op: old 827.2 [827.2, 827.3] new 827.2 [827.2, 827.3]: no change, within the 0.1% threshold, ranges overlap
    ok   RDMAWrite/size=2-4 kernel-work-insns/op: old 28206.0 [28083.0, 28226.0] new 28241.0 [27914.0, 28288.0]: +0.12% worse, within the 2% threshold, ranges overlap
  trial 2: gate status 0; 380 s wall, load 15.20-18.00; top of the diff: 
    ok   RDMAWrite/size=2-4 user-insns/op: old 827.2 [827.2, 827.3] new 827.2 [827.2, 827.3]: no change, within the 0.1% threshold, ranges overlap
    ok   RDMAWrite/size=2-4 kernel-work-insns/op: old 28241.0 [27914.0, 28288.0] new 28206.0 [28083.0, 28226.0]: -0.12% better, within the 2% threshold, ranges overlap

Kernel work A/B, stock rdma_rxe against -rxe-extra-cost 100 (about 800 kernel instructions per 2 B round trip, in rxe_rcv), 2 trials of one boot a side, 3 runs a boot, RDMAWrite 2 B, 500x:
  the gate on work (user-insns/op, kernel-work-insns/op): failed 2, passed 0, undecided 0, could not judge 0 of 2
  trial 1: gate status 1; 400 s wall, load 12.00-14.50; top of the diff: kernel rdma_rxe rxe_rcv +801.0 insns/op (+190.0%)
    FAIL RDMAWrite/size=2-4 kernel-work-insns/op: old 28206.0 [28083.0, 28226.0] new 29006.0 [28983.0, 29026.0]: +2.84% worse, above the 2% threshold, ranges apart
  trial 2: gate status 1; 410 s wall, load 14.50-13.00; top of the diff: kernel-work rdma_rxe rxe_rcv +799.0 insns/op (+189.0%)
    FAIL RDMAWrite/size=2-4 kernel-work-insns/op: old 28206.0 [28083.0, 28226.0] new 29030.0 [28983.0, 29126.0]: +2.92% worse, above the 2% threshold, ranges apart

Drift across boots: 2 boots per setting, 6 runs of 2 B x 5000x each, settings alternated:
  before (-pin none -isolate=false), host load per boot (start-end): 1.2-1.4 1.1-1.3 
    p50 per boot (median of 6 runs, ns): 24000 26400 -> spread 10.0% (max/min - 1), median 25200 ns
    min per boot (median of 6 runs, ns): 13000 14300 -> spread 10.0% (max/min - 1), median 13650 ns
    A/A across boots 1 vs 2: benchstat flagged 0 of 6 time metrics

done 2026-12-05T11:00:00Z, load 1.00 1.00 1.00 on 2 CPUs
`

// TestParseFigures checks each kind of step against values read off the
// sample by hand.
func TestParseFigures(t *testing.T) {
	rows, err := parseFigures(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := []row{
		{rank: rankAA, date: "2026-12-05", when: "2026-12-05, abc1234", load: "1.0-2.0",
			comparison: "interleaved runs, 10 pairs of 5000x, sizes 2,4096", check: "A/A, the same build",
			result:  "benchstat flagged 1 of 24 time-metric comparisons (4.2%); the gate failed 0 of 2 trials",
			command: "`STEPS=aa TRIALS=2 PAIRS=10 make validate-ab`"},
		{rank: rankAB, date: "2026-12-05", when: "2026-12-05, abc1234", load: "1.1-2.1",
			comparison: "interleaved runs, 10 pairs", check: "A/B, +800 ns a round trip",
			result:  "found slower at 2 B: p50 in 1 of 2 trials, min in 2 of 2",
			command: "`STEPS=ab TRIALS=2 PAIRS=10 DELAY_NS=800 make validate-ab`"},
		// Estimates +1.50 and +3.10; pairs 14 and 60; guest 20 and 90 s;
		// DUET_PAIRS 60 is not the default, so the command names it.
		{rank: rankDuetAB, date: "2026-12-05", when: "2026-12-05, abc1234", load: "2.0-4.0",
			comparison: "duet, up to 60 pairs of 2000x, turns of 200", check: "A/B, +800 ns a round trip, seeded co-tenant noise",
			result:  "found (gate failed) in **1 of 2**, passed 0, undecided 1; p50-ns estimates +1.50% to +3.10%; 14-60 pairs, 20-90 guest s a trial",
			command: "`STEPS=duet-ab TRIALS=2 NOISE=1 DUET_PAIRS=60 make validate-ab`"},
		// Both trials ran all 80 pairs: one figure, not a range.
		{rank: rankDuetAA, date: "2026-12-05", when: "2026-12-05, abc1234", load: "1.5-2.5",
			comparison: "duet, up to 80 pairs of 2000x, turns of 200", check: "A/A, the same build",
			result:  "**passed 2**, failed 0, undecided 0 of 2; p50-ns estimates -0.20% to +0.40%; 80 pairs, 120-130 guest s a trial",
			command: "`STEPS=duet-aa TRIALS=2 make validate-ab`"},
		// Spreads: user 0.012% and 0.000%, kernel 2.117% and 1.068%;
		// guest 150 and 170 s.
		{rank: rankWorkAA, date: "2026-12-05", when: "2026-12-05, abc1234", load: "10.0-14.0",
			comparison: "work (rxevm -insns), 3 interleaved runs a side of 500x, RDMAWrite 2 B", check: "A/A, the same build, seeded co-tenant noise",
			result:  "**passed 2**, failed 0, undecided 0 of 2; spread of a side's runs: user-insns/op 0.000%-0.012%, kernel-insns/op 1.07%-2.12%; 150-170 guest s a trial",
			command: "`STEPS=work-aa TRIALS=2 NOISE=1 make validate-ab`"},
		{rank: rankWorkAB, date: "2026-12-05", when: "2026-12-05, abc1234", load: "11.0-15.0",
			comparison: "work (rxevm -insns), 3 interleaved runs a side of 500x, RDMAWrite 2 B", check: "A/B, +140 instructions a round trip, seeded co-tenant noise",
			result:  "found (gate failed) in **2 of 2**, passed 0, undecided 0; the diff's top function rb_write_ping in 2; spread of a side's runs: user-insns/op 0.000%, kernel-insns/op 0.20%-2.12%; 160-180 guest s a trial",
			command: "`STEPS=work-ab TRIALS=2 NOISE=1 make validate-ab`"},
		// Wall 429 and 380 s; the loads at the trials' ends included;
		// a trial whose diff named no function counts as such.
		{rank: rankKernelAA, date: "2026-12-05", when: "2026-12-05, abc1234", load: "10.9-18.0",
			comparison: "kernel work (rdmaab -work, one boot a side), 3 runs a boot of 500x, RDMAWrite 2 B", check: "A/A, stock rdma_rxe in two boots (-boots)",
			result:  "**passed 2**, failed 0, undecided 0, not judged 0 of 2; kernel-work-insns/op medians new/old -0.12% to +0.12%; 380-429 s wall a trial",
			command: "`STEPS=work-kaa TRIALS=2 make validate-ab`"},
		{rank: rankKernelAB, date: "2026-12-05", when: "2026-12-05, abc1234", load: "12.0-14.5",
			comparison: "kernel work (rdmaab -work, one boot a side), 3 runs a boot of 500x, RDMAWrite 2 B", check: "A/B, stock rdma_rxe against -rxe-extra-cost 100 (about +800 kernel instructions a round trip in rxe_rcv)",
			result:  "found (gate failed) in **2 of 2**, passed 0, undecided 0, not judged 0; the diff's top function rxe_rcv in 2; kernel-work-insns/op medians new/old +2.84% to +2.92%; 400-410 s wall a trial",
			command: "`STEPS=work-kab TRIALS=2 make validate-ab`"},
		// Loads 1.2 1.4 1.1 1.3: 1.1-1.4.
		{rank: rankBoots, date: "2026-12-05", when: "2026-12-05, abc1234", load: "1.1-1.4",
			comparison: "across boots, rxevm -pin none -isolate=false", check: "the same build, 2 boots of 6 runs of 5000x",
			result:  "p50 per boot spread 10.0% (median 25200 ns); min per boot spread 10.0% (median 13650 ns)",
			command: "`STEPS=boots BOOTS=2 BOOT_MODES=before make validate-ab`"},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d:\ngot  %+v\nwant %+v", i, rows[i], want[i])
		}
	}
	table := render(rows)
	if !strings.HasPrefix(table, "| comparison |") || strings.Index(table, "duet-ab") > strings.Index(table, "duet-aa") ||
		strings.Index(table, "duet-aa") > strings.Index(table, "STEPS=ab") || strings.Index(table, "STEPS=aa") > strings.Index(table, "STEPS=boots") {
		t.Errorf("rows not in the order duet A/B, duet A/A, A/B, A/A, boots:\n%s", table)
	}
}

// TestParseFiguresRefuses checks that a file the parser does not know
// fails loudly rather than dropping a figure.
func TestParseFiguresRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"unknown step":  "rdmaab validation, 2026-12-05T10:00:00Z, commit abc1234, load 1\n\nDuet A/C, something new:\n",
		"no header":     "A/A, one boot, 2 trials x 10 interleaved pairs, sizes 2, 5000x (600 s, host load 1.0-2.0 (mean 1.5) on 2 CPUs):\n",
		"no summary":    "rdmaab validation, 2026-12-05T10:00:00Z, commit abc1234, load 1\n\nA/A, one boot, 2 trials x 10 interleaved pairs, sizes 2, 5000x (600 s, host load 1.0-2.0 (mean 1.5) on 2 CPUs):\n  trial 1: benchstat flagged 0 of 12; gate status 0\n",
		"no boot lines": "rdmaab validation, 2026-12-05T10:00:00Z, commit abc1234, load 1\n\nDrift across boots: 2 boots per setting, 6 runs of 2 B x 5000x each, settings alternated:\n",
	} {
		if _, err := parseFigures(strings.NewReader(text)); !errors.Is(err, errFormat) {
			t.Errorf("%s: got %v, want errFormat", name, err)
		}
	}
	long := "rdmaab validation, 2026-12-05T10:00:00Z, commit abc1234, load 1\n" + strings.Repeat("x", maxLineBytes+1) + "\n"
	if _, err := parseFigures(strings.NewReader(long)); err == nil {
		t.Error("a line over the bound was accepted")
	}
	big := "rdmaab validation, 2026-12-05T10:00:00Z, commit abc1234, load 1\n" + strings.Repeat("  trial\n", maxFiguresBytes/8+1)
	if _, err := parseFigures(strings.NewReader(big)); err == nil {
		t.Error("a file over the bound was accepted")
	}
}
