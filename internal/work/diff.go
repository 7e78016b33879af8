package work

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
)

// A Change is one function's instructions per operation on two sides.
type Change struct {
	Func
	Old, New float64
}

// Delta is the change in instructions per operation.
func (c Change) Delta() float64 { return c.New - c.Old }

// Pct is the change relative to the old side, in percent: +Inf for a
// function the old side did not run.
func (c Change) Pct() float64 {
	if c.Old == 0 {
		if c.New == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return 100 * (c.New/c.Old - 1)
}

// String says the change as `rxe_requester +312 insns/op (+2.2%)`, with the
// space and object in front.
func (c Change) String() string {
	pct := "new"
	switch {
	case c.New == 0:
		pct = "gone"
	case c.Old != 0:
		pct = strconv.FormatFloat(c.Pct(), 'f', 1, 64) + "%"
		if c.Pct() >= 0 {
			pct = "+" + pct
		}
	}
	return fmt.Sprintf("%-12s %-16s %s %+.1f insns/op (%s)", c.Space, c.Object, c.Name, c.Delta(), pct)
}

// Diff returns every function of old and new in the given spaces (all
// when none are given), the largest change in instructions per operation
// first, either way; ties by name.
func Diff(old, new Profile, spaces ...Space) []Change {
	in := func(s Space) bool {
		if len(spaces) == 0 {
			return true
		}
		for _, x := range spaces {
			if x == s {
				return true
			}
		}
		return false
	}
	m := map[Func]*Change{}
	get := func(f Func) *Change {
		c := m[f]
		if c == nil {
			c = &Change{Func: f}
			m[f] = c
		}
		return c
	}
	for f, v := range old.PerOp {
		if in(f.Space) {
			get(f).Old = v
		}
	}
	for f, v := range new.PerOp {
		if in(f.Space) {
			get(f).New = v
		}
	}
	out := make([]Change, 0, len(m))
	for _, c := range m {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := math.Abs(out[i].Delta()), math.Abs(out[j].Delta())
		if a != b {
			return a > b
		}
		return out[i].Func.String() < out[j].Func.String()
	})
	return out
}

// Mean returns the mean profile of several runs of one benchmark: each
// function's instructions per operation averaged over the runs (a run
// that did not run a function counts 0 for it), and their operations
// summed.
func Mean(ps ...Profile) Profile {
	m := Profile{PerOp: map[Func]float64{}}
	for _, p := range ps {
		m.Ops += p.Ops
		for f, v := range p.PerOp {
			m.PerOp[f] += v / float64(len(ps))
		}
	}
	return m
}

// WriteDiff writes each space's total on both sides, then the functions
// whose instructions per operation changed most, either way, at most n
// (0: all) and none by less than minDelta; it returns the functions
// written.
//
//	kernel       total 14000.0 -> 14312.0 insns/op (+312.0, +2.23%)
//	kernel       rdma_rxe         rxe_requester +312.0 insns/op (+2.2%)
func WriteDiff(w io.Writer, old, new Profile, spaces []Space, n int, minDelta float64) ([]Change, error) {
	bw := bufio.NewWriter(w)
	for _, s := range spaces {
		a, b := old.Total(s), new.Total(s)
		pct := 0.0
		if a != 0 {
			pct = 100 * (b/a - 1)
		}
		fmt.Fprintf(bw, "%-12s total %.1f -> %.1f insns/op (%+.1f, %+.2f%%)\n", s, a, b, b-a, pct)
	}
	var shown []Change
	for _, c := range Diff(old, new, spaces...) {
		if math.Abs(c.Delta()) < minDelta || (n > 0 && len(shown) == n) {
			break
		}
		fmt.Fprintln(bw, c)
		shown = append(shown, c)
	}
	if len(shown) == 0 {
		fmt.Fprintf(bw, "no function changed by %g insns/op or more\n", minDelta)
	}
	return shown, bw.Flush()
}

// Counted are the spaces whose work does not follow time (kernel-wait and
// kernel-other do: interrupts of a spin, other vCPUs' idle loop).
var Counted = []Space{SpaceUser, SpaceKernel}

// CountedIn returns the spaces a diff of the profiles shows: Counted, with
// the kernel's work (SpaceKernelWork, what kernel-work-insns/op counts) in
// place of the kernel's all where every profile has that split. The
// kernel's all holds the timer interrupt's functions, more of them the
// slower the host: across two boots of one build they led the diff
// (rcu_sched_clock_irq +28 insns/op, +344%) while kernel-work moved 0.1%.
func CountedIn(ps ...Profile) []Space {
	for _, p := range ps {
		if p.Total(SpaceKernelWork) == 0 {
			return Counted
		}
	}
	return []Space{SpaceUser, SpaceKernelWork}
}
