package manual

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// The kernel work steps (work-kaa, work-kab): rdmaab -work with each side
// in a boot of its own, one trial a line with its wall time and the host's
// load at its start and end.
var (
	reKernel     = regexp.MustCompile(`^Kernel work (A/A|A/B), stock rdma_rxe (?:in two boots \(-boots\)|against -rxe-extra-cost (\d+) \(about (\d+) kernel instructions per 2 B round trip, in (\S+)\)), (\d+) trials of one boot a side, (\d+) runs a boot, (\S+) 2 B, (\S+):`)
	reKernelWall = regexp.MustCompile(`^  trial \d+: gate status (\d+); (\d+) s wall, load ([0-9.]+)-([0-9.]+); top of the diff: (?:kernel\S* \S+ (\S+) [+-])?`)
	reKernelWork = regexp.MustCompile(`kernel-work-insns/op: old [0-9.]+ \[[^]]*\] new [0-9.]+ \[[^]]*\]: ([+-][0-9.]+)% `)
)

// defaultRxeExtraCost is validate-ab.sh's RXE_EXTRA_COST.
const defaultRxeExtraCost = "100"

// kernelRow is the row of a kernel work step: the gate's counts, how the
// kernel-work medians moved, for A/B how often the diff's top function was
// the one that grew, and each trial's wall time.
func (s *step) kernelRow(r row) ([]row, error) {
	h := s.head
	kind, cost, added, fn, trials, runs, bench, bt := h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]
	var v []string
	var wall, loads, moved []float64
	top := map[string]int{}
	for _, l := range s.lines {
		if m := reWorkVer.FindStringSubmatch(l); m != nil {
			v = m
		}
		if m := reKernelWall.FindStringSubmatch(l); m != nil {
			wall, loads = append(wall, number(m[2])), append(loads, number(m[3]), number(m[4]))
			if m[1] == "0" || m[1] == "1" { // a trial the gate judged
				top[cmp.Or(m[5], "no kernel function")]++
			}
		}
		if m := reKernelWork.FindStringSubmatch(l); m != nil {
			moved = append(moved, number(m[1]))
		}
	}
	if v == nil || len(wall) == 0 || len(moved) == 0 {
		return nil, fmt.Errorf("kernel work step of %s (%s): no gate summary or per-trial line: %w", s.date, s.commit, errFormat)
	}
	failed, passed, undecided, broken, total := v[1], v[2], v[3], v[4], v[5]
	r.comparison = fmt.Sprintf("kernel work (rdmaab -work, one boot a side), %s runs a boot of %s, %s 2 B", runs, bt, bench)
	step := "work-kaa"
	if kind == "A/B" {
		step = "work-kab"
		r.check = fmt.Sprintf("A/B, stock rdma_rxe against -rxe-extra-cost %s (about +%s kernel instructions a round trip in %s)", cost, added, fn)
		r.result = fmt.Sprintf("found (gate failed) in **%s of %s**, passed %s, undecided %s, not judged %s", failed, total, passed, undecided, broken)
		var fns []string
		for _, f := range slices.Sorted(maps.Keys(top)) {
			fns = append(fns, fmt.Sprintf("%s in %d", f, top[f]))
		}
		r.result += "; the diff's top function " + strings.Join(fns, ", ")
	} else {
		r.check = "A/A, stock rdma_rxe in two boots (-boots)"
		r.result = fmt.Sprintf("**passed %s**, failed %s, undecided %s, not judged %s of %s", passed, failed, undecided, broken, total)
	}
	r.result += fmt.Sprintf("; kernel-work-insns/op medians new/old %s; %s s wall a trial", span(moved, "%+.2f%%"), span(wall, "%.0f"))
	r.load = span(loads, "%.1f")
	cmd := fmt.Sprintf("STEPS=%s TRIALS=%s", step, trials)
	cmd += unlessDefault([][3]string{{"WORK_RUNS", runs, defaultWorkRuns}, {"WORK_BENCHTIME", bt, defaultWorkBenchtime}})
	if kind == "A/B" {
		cmd += unlessDefault([][3]string{{"RXE_EXTRA_COST", cost, defaultRxeExtraCost}})
	}
	r.command = "`" + cmd + " make validate-ab`"
	return []row{r}, nil
}
