package abtest

// Thresholds are the rules of every verdict a comparison gives, in one
// table (as x/perf's benchmath.Thresholds): rdmaab's gate, its paired
// verdict over duet and boot pairs, its -ci stop rule, and rdmacompare's
// judge of a target. DefaultThresholds holds the defaults; the commands'
// flags start from it, and nothing else holds a default of a verdict.
type Thresholds struct {
	// The gate (rdmaab -gate, rdmaab gate): Units fail when worse by
	// more than Threshold (0.05 for 5%, a change of the medians) and
	// their test finds the sides differ, with a chance of a false alarm
	// of Alpha for all of them and all looks together; Confidence is the
	// medians' intervals shown beside the U test.
	Units      []string
	Threshold  float64
	Alpha      float64
	Confidence float64

	// The work rule (WorkRule) judges the units of Units that count work
	// (IsWorkUnit): a unit's median worse by more than its WorkThresholds
	// entry (WorkOther for another work unit) with the sides' runs apart,
	// from WorkMinRuns runs a side.
	WorkThresholds map[string]float64
	WorkOther      float64
	WorkMinRuns    int

	// The paired verdict over duet pairs and boot pairs: its test, and
	// the pairs before it decides anything (a pair of processes, or of
	// boots, is its unit).
	Method   PairedMethod
	MinPairs int

	// The -ci stop rule: stop once the Confidence interval of every
	// median per-pair ratio of StopUnits is within ±StopHalfWidth, after
	// StopMinPairs pairs at least.
	StopUnits     []string
	StopHalfWidth float64
	StopMinPairs  int
	StopMaxPairs  int

	// rdmacompare's judge of a target: one look over rounds fixed in
	// advance, at TargetAlpha, from TargetMinRounds rounds.
	TargetAlpha     float64
	TargetMinRounds int
}

// DefaultThresholds are the defaults of every verdict.
//
// Alpha is 0.01: a CI gate's false alarm costs a person's time, and it
// fails on regressions only, so about half its alarms count: at 0.01 an
// A/A fails about one job in 200-400 (at 0.05, 1 in 30-40 of simulated
// duets at the soft-RoCE VM's spread), while a +3% change at that spread is
// still found within 80 pairs (TestGateAtTheDuetsSpread). The signed-rank
// test uses the order of the ratios' sizes, so one wild pair weighs no
// more than the largest ordinary one. 3 pairs: fewer say nothing of the
// spread between processes. StopMinPairs 6 is the fewest with a finite 95%
// interval of a median. rdmacompare's judge reports a target met or
// missed, not a CI job's failure: 0.05, from 6 rounds, the fewest with
// which the signed-rank test can reach it (p = 2/2^6).
//
// Work (instructions per operation, rxevm -insns) is gated beside time
// where the results have it. Its thresholds stand on the A/A spread
// measured in the soft-RoCE VM (docs/validation.md): user-insns/op
// repeats to a tenth of an instruction in ~470-1400 (0.02% over 42 A/A
// runs, the host loaded or not), so 0.1% is five times its spread and
// finds one extra instruction in a thousand. kernel-insns/op counts the
// timer ticks and softirqs that land in the window, more of them the
// slower the host: with the seeded co-tenant on a host at load 19-38 it
// spread 2-8% over a side's runs and the medians of two sides of one
// build moved by up to 2.6% (at 2% one of 14 trials flagged kernel work
// that had not changed), so 5% is about twice the widest. The parts
// of kernel work that follow time (kernel-wait, kernel-other) are not
// gated by default. kernel-work-insns/op (the kernel's work on every
// vCPU, what follows time left out by the plugin: docs/work.md) spread
// 0.78% over 6 runs in two boots at load 23-27 (RDMAWrite 2 B, 1000x:
// 28254-28474 while kernel-insns/op spread 2.1%), the boots' medians 0.57%
// apart, and 1.1% over 3 runs of 500x in one boot (27898-28206): 2% is
// about twice the widest, as 5% was for kernel-insns/op; a side of runs
// all slowed 5x by the host moved it by about 2.5%, which the rule's
// "every run apart" stops when the sides are interleaved. 3 runs a side: the fewest whose range says
// anything of the spread beside the median.
var DefaultThresholds = Thresholds{
	Units:      []string{"p50-ns", "p99-ns", "user-insns/op", "kernel-insns/op", "kernel-work-insns/op"},
	Threshold:  0.05,
	Alpha:      0.01,
	Confidence: 0.95,

	WorkThresholds: map[string]float64{"user-insns/op": 0.001, "kernel-insns/op": 0.05, "kernel-work-insns/op": 0.02},
	WorkOther:      0.05,
	WorkMinRuns:    3,

	Method:   SignedRank,
	MinPairs: 3,

	StopUnits:     []string{"p50-ns"},
	StopHalfWidth: 0.02,
	StopMinPairs:  6,
	StopMaxPairs:  30,

	TargetAlpha:     0.05,
	TargetMinRounds: 6,
}

// GateRule is the gate over the runs (the U test), of the time units of
// Units (work goes to WorkRule).
func (t Thresholds) GateRule() GateRule {
	_, units := SplitWork(t.Units)
	return GateRule{Units: units, Threshold: t.Threshold, Alpha: t.Alpha, Confidence: t.Confidence}
}

// WorkRule is the work rule over the work units of Units.
func (t Thresholds) WorkRule() WorkRule {
	units, _ := SplitWork(t.Units)
	return WorkRule{Units: units, Thresholds: t.WorkThresholds, Other: t.WorkOther, MinRuns: t.WorkMinRuns}
}

// SequentialRule is the paired verdict over at most pairs pairs: a look
// after every pair from MinPairs on.
func (t Thresholds) SequentialRule(pairs int) SequentialRule {
	return SequentialRule{Method: t.Method, Alpha: t.Alpha, Threshold: t.Threshold,
		MinRounds: t.MinPairs, MaxLooks: max(1, pairs-t.MinPairs+1)}
}

// StopRule is the -ci stop rule.
func (t Thresholds) StopRule() StopRule {
	return StopRule{Units: t.StopUnits, HalfWidth: t.StopHalfWidth, Confidence: t.Confidence,
		MinPairs: t.StopMinPairs, MaxPairs: t.StopMaxPairs}
}

// TargetRule is rdmacompare's judge: one look at TargetAlpha (its
// Threshold is the target's tolerance, set per target).
func (t Thresholds) TargetRule() SequentialRule {
	return SequentialRule{Method: t.Method, Alpha: t.TargetAlpha, MaxLooks: 1, MinRounds: t.TargetMinRounds}
}

// AlphaShare is the part of alpha a family of k of n metrics judged by
// one test spends when two tests judge them (the duet's pairs judge p50
// and min, the U test p99): Bonferroni between the families, Holm within
// each, so that the chance of any false alarm stays at most alpha.
func AlphaShare(alpha float64, k, n int) float64 {
	if n == 0 {
		return alpha
	}
	return alpha * float64(k) / float64(n)
}
