package perftestcmp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/loops"
	"github.com/rdmabench/rdmabench/internal/perftest"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/internal/work"
)

// Work per operation, the verdict where time is emulation (docs/comparing.md):
// under rxevm -insns each tool and size also runs, after the rounds, the
// work runs: perftest's pair, then our benchmark, each for WorkIters and
// for twice as many operations, with rxevm's LD_PRELOAD library
// (work.PreloadPath), which marks their polls as our loops' markers do.
// Each side's work per operation is the difference of its two runs over
// the difference of their operations (work.Between): what a program does
// once cancels. Ours is measured both ways, so each comparison shows how
// far the method is from our markers' figure (from the rounds' runs).

// DefaultWorkIters is the shorter work run's operations: the difference
// of 2000 operations divides what does not cancel (a timer tick, about
// 10,000 kernel instructions) down to a few per operation.
const DefaultWorkIters = 2000

// A WorkResult is one tool and size's work per operation.
type WorkResult struct {
	Tool *Tool
	Size int
	// Markers is ours from our loops' markers (the rounds' runs, median);
	// HasMarkers says whether those runs reported it.
	Markers    work.PerOp
	HasMarkers bool
	// Ours and Perftest are each side's by the method (two runs, the
	// preload library); ours only with Config.WorkBench (HasOurs).
	Ours, Perftest work.PerOp
	HasOurs        bool
	Err            error // why a figure is missing
}

// workCanRun says why the work runs cannot run here, or nil.
func (c *Config) workCanRun() error {
	if c.WorkIters == 0 {
		return errors.New("-work-iters 0")
	}
	if !c.PinPerftest {
		return errors.New("-pin=false: the counter's windows are per vCPU, so each program's threads must stay on one")
	}
	if os.Getenv(work.EnvPlugin) == "" {
		return fmt.Errorf("%w: not in rxevm -insns ($%s is not set; make compare runs it so)", work.ErrUnavailable, work.EnvPlugin)
	}
	_, err := work.PreloadPath()
	return err
}

// measureWork runs tool t at size for the method, both sides, and returns
// their work per operation.
func measureWork(ctx context.Context, c *Config, t *Tool, size int, save func(string, []byte)) (ours, pt work.PerOp, hasOurs bool, err error) {
	m, err := newMethod(c)
	if err != nil {
		return ours, pt, false, err
	}
	defer m.close()
	tag := fmt.Sprintf("work-%ssize%d", t.tag(), size)
	r, err := m.measure(c, t, tag, "perftest", save, perftestOnce(ctx, c, t, size, tag, save))
	if err != nil || c.WorkBench == "" {
		return ours, r.PerOp, false, err
	}
	pt = r.PerOp
	r, err = m.measure(c, t, tag, "ours", save, func(wc *Config) error {
		wc.Bench = c.WorkBench
		dir, cleanup, err := wc.samplesDir(fmt.Sprintf("%s-n%d-ours-samples", tag, wc.Iters))
		if err != nil {
			return err
		}
		defer cleanup()
		br, err := runBench(ctx, wc, t, size, dir)
		save(fmt.Sprintf("%s-n%d-bench.txt", tag, wc.Iters), br.out)
		return err
	})
	return r.PerOp, pt, err == nil, err
}

// perftestOnce runs tool t's perftest pair once, as the method's run.
func perftestOnce(ctx context.Context, c *Config, t *Tool, size int, tag string, save func(string, []byte)) func(*Config) error {
	return func(wc *Config) error {
		for try := 1; ; try++ {
			wc.Port = freePort(c.Port)
			_, raw, err := runPerftest(ctx, wc, t, size, wc.Port)
			save(fmt.Sprintf("%s-n%d-perftest-client.txt", tag, wc.Iters), raw.client)
			save(fmt.Sprintf("%s-n%d-perftest-server.txt", tag, wc.Iters), raw.server)
			if errors.Is(err, perftest.ErrNoClock) && try <= c.Retries && ctx.Err() == nil {
				continue
			}
			return err
		}
	}
}

// A method holds what the method's runs share: the preload library, the
// counter and the library's tally.
type method struct {
	preload string
	counter work.Counter
	tally   *work.CallTally
	tmp     string
}

func newMethod(c *Config) (*method, error) {
	pre, err := work.PreloadPath()
	if err != nil {
		return nil, err
	}
	counter, err := work.Open()
	if err != nil {
		return nil, err
	}
	m := &method{preload: pre, counter: counter}
	if m.tmp, err = os.MkdirTemp("", "rdmacompare-work"); err == nil {
		m.tally, err = work.NewCallTally(m.tmp)
	}
	if err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

func (m *method) close() {
	m.counter.Close()
	if m.tmp != "" {
		os.RemoveAll(m.tmp)
	}
}

// A methodResult is one side's work per operation by the method.
type methodResult struct {
	work.PerOp         // less the library's own instructions
	Calls      float64 // calls through the library that counted, per operation
	Lost       uint64  // WRITE waits that found no answer, both runs
}

// measure runs once (a program, for c.Iters operations) for c.WorkIters
// and twice as many operations under the preload library and returns the
// work per operation.
func (m *method) measure(c *Config, t *Tool, tag, side string, save func(string, []byte), once func(*Config) error) (methodResult, error) {
	n := []int{c.WorkIters, 2 * c.WorkIters}
	var counts [2]work.Counts
	var calls [2]uint64
	var res methodResult
	for i, iters := range n {
		wc := *c
		wc.Iters = iters
		wc.Timeout = c.workTimeout(iters)
		if t.op == spec.Send && !t.ud {
			// perftest reposts a receive only while rx_depth more remain
			// to come, and lowers rx_depth to the run's operations: the
			// same depth in both runs, at most the shorter's, makes the
			// difference one repost per receive, as in its steady state
			// (and ours).
			wc.rxDepth = min(loops.DefaultRxDepth, c.WorkIters)
		}
		// The preload marks the programs' polls; RXEVM_INSNS empty keeps
		// our benchmark from resetting the counter itself.
		// RDMABENCH_TIMEOUT: our benchmark's waits on the peer get
		// workWaitTimeout, not 5 s (perftest has no such deadline).
		wc.extraEnv = []string{"LD_PRELOAD=" + m.preload, work.EnvPlugin + "=", m.tally.Env(),
			env.VarTimeout + "=" + workWaitTimeout.String()}
		if t.op == spec.Write {
			// Both sides spin on a buffer byte between a send completion
			// and the next post.
			wc.extraEnv = append(wc.extraEnv, work.EnvPreloadSpin+"="+work.PreloadSpinAfterCompletion)
		}
		if err := m.tally.Reset(); err != nil {
			return res, err
		}
		var err error
		counts[i], err = work.MeasureProgram(m.counter, func() error { return once(&wc) })
		if err != nil {
			return res, fmt.Errorf("%s, %d operations: %w", side, iters, err)
		}
		var lost uint64
		if calls[i], lost, err = m.tally.Read(); err != nil {
			return res, fmt.Errorf("%s, %d operations: %w", side, iters, err)
		}
		res.Lost += lost
		// The plugin's counts per guest address, and the kernel's split
		// into work and time, for a look at where the work went (the
		// processes are gone: their symbols with them; the kernel's are
		// in kallsyms.txt).
		for _, f := range []string{work.ProfileFile, work.ProfileFile + "-kernel"} {
			if raw, err := os.ReadFile(filepath.Join(filepath.Dir(os.Getenv(work.EnvPlugin)), f)); err == nil {
				save(fmt.Sprintf("%s-n%d-%s-%s.txt", tag, iters, side, f), raw)
			}
		}
		if raw, err := os.ReadFile(os.Getenv(work.EnvPlugin)); err == nil {
			save(fmt.Sprintf("%s-n%d-%s-counts.txt", tag, iters, side), raw)
		}
	}
	p, err := work.Between(counts[0], counts[1], uint64(n[0]), uint64(n[1]))
	res.Calls = (float64(calls[1]) - float64(calls[0])) / float64(n[1]-n[0])
	res.PerOp = p.LessCalls(res.Calls)
	if max := maxLostWaits(n[0] + n[1]); err == nil && res.Lost > max {
		// Each lost wait dropped a stretch the markers count.
		err = fmt.Errorf("%s: %w: %d waits in two runs (at most %d: each run's last write, which no answer follows, and a stall past a second in 1%% of the operations)", side, ErrLostWaits, res.Lost, max)
	}
	return res, err
}

// workTimeout is the deadline of a work run of ops operations: -timeout
// is a run of -iters operations (the rounds', which ran before in this
// boot, as slow as the work runs under the plugin), and a longer run gets
// proportionally more. A fixed deadline killed perftest's 4 KiB WRITE
// work run: under the plugin on a loaded host a 4 KiB round trip took
// 10-50 ms, 4000 of them more than -timeout's 2 minutes.
func (c *Config) workTimeout(ops int) time.Duration {
	if c.Iters <= 0 || ops <= c.Iters {
		return c.Timeout
	}
	return time.Duration(float64(c.Timeout) * float64(ops) / float64(c.Iters))
}

// workWaitTimeout is how long our benchmark's waits on its peer may last
// in a work run: they count instructions, not time, and on a loaded host
// under the plugin a stall outlasted the default 5 s (a 2000-operation
// 4 KiB send run at load 20 failed so). The run's deadline still holds.
const workWaitTimeout = 60 * time.Second

// ErrLostWaits means the preload library's WRITE waits found no answer
// more often than a run's end explains: the peer stalled past a second, or
// the program does not ping-pong on one buffer byte as the method expects.
var ErrLostWaits = errors.New("the WRITE waits found no answer")

// maxLostWaits is what two runs of ops operations in all may lose: one
// wait each, after the last write, and on a loaded host a peer stalled
// past a second now and then (1% of the operations: each lost wait drops
// about 140 instructions, so they move the figure by 0.2% at most). A
// wait that does not work loses every operation's.
func maxLostWaits(ops int) uint64 { return uint64(2 + ops/100) }

// markerWork returns ours from the markers: the median over the runs that
// reported user and kernel. The kernel's other parts are each a median,
// kernel-wait and kernel-other 0 where a run lacks them (a hardware
// counter's); kernel work is the median of the runs that reported it,
// absent when none did (a counter without the kernel's roles).
func markerWork(results []*BenchResult) (work.PerOp, bool) {
	var user, kernel, kwait, kother, kwork []float64
	for _, r := range results {
		u, okU := r.Metrics[work.UnitUser]
		k, okK := r.Metrics[work.UnitKernel]
		if okU && okK {
			user = append(user, u)
			kernel = append(kernel, k)
			kwait = append(kwait, r.Metrics[work.UnitKernelWait])
			kother = append(kother, r.Metrics[work.UnitKernelOther])
			if kw, ok := r.Metrics[work.UnitKernelWork]; ok {
				kwork = append(kwork, kw)
			}
		}
	}
	if len(user) == 0 {
		return work.PerOp{}, false
	}
	p := work.PerOp{User: medianOf(user), Kernel: medianOf(kernel),
		KernelWait: medianOf(kwait), KernelOther: medianOf(kother)}
	if len(kwork) > 0 {
		p.KernelWork, p.HasKernelWork = medianOf(kwork), true
	}
	return p, true
}

// medianOf returns the median of v (not empty), the mean of the middle
// two for an even count.
func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// childEnv is the environment of perftest's programs: this process's,
// with extraEnv after it (the later of two settings wins); nil, which
// inherits it, when there is none.
func (c *Config) childEnv() []string {
	if len(c.extraEnv) == 0 {
		return nil
	}
	return append(os.Environ(), c.extraEnv...)
}

// runWork runs the work runs of every tool and size the rounds measured
// (once each) and returns their results, or why there are none.
func (c *Config) runWork(ctx context.Context, samples []Sample, bench map[string][]*BenchResult,
	save func(string, []byte), logf func(string, ...any)) ([]WorkResult, error) {
	if err := c.workCanRun(); err != nil {
		if c.WorkIters > 0 {
			logf("no work figures: %v", err)
		}
		return nil, err
	}
	// The kernel's roles go to the plugin before any program runs, as
	// rdmalat's Measure sends them before its run: reading kallsyms under
	// the plugin takes seconds. Without them kernel work is not counted.
	if err := work.Prepare(); err != nil {
		logf("no kernel work figures (the kernel's roles: %v)", err)
	}
	// The boot's kernel symbols, to read the saved profiles' kernel
	// addresses by (they move with every boot).
	if c.OutDir != "" {
		if raw, err := os.ReadFile("/proc/kallsyms"); err == nil {
			save("kallsyms.txt", raw)
		}
	}
	var out []WorkResult
	seen := map[string]bool{}
	for _, smp := range samples {
		key := fmt.Sprintf("%s/%d", smp.Tool, smp.Size)
		if seen[key] {
			continue
		}
		seen[key] = true
		t := c.tool(smp.Tool)
		if t == nil {
			continue
		}
		w := WorkResult{Tool: t, Size: smp.Size}
		w.Markers, w.HasMarkers = markerWork(bench[key])
		w.Ours, w.Perftest, w.HasOurs, w.Err = measureWork(ctx, c, t, smp.Size, save)
		if w.Err != nil {
			logf("work %s size %d: %v", t.name, smp.Size, w.Err)
		} else {
			logf("work %s size %d: user perftest %.1f ours %.1f (markers %.1f) | kernel work perftest %.0f ours %.0f by the markers (%.0f by the method) insns/op",
				t.name, smp.Size, w.Perftest.User, w.oursUser(), w.Markers.User, comparedKernel(w.Perftest), comparedKernel(w.Markers), comparedKernel(w.Ours))
		}
		out = append(out, w)
		if ctx.Err() != nil {
			break
		}
	}
	return out, nil
}

// tool returns the configured tool named name, or nil.
func (c *Config) tool(name string) *Tool {
	for _, t := range c.Tools {
		if t.name == name {
			return t
		}
	}
	return nil
}

// oursUser is ours by the method where it ran, else by the markers (NaN
// with neither): the user figure the ratio takes.
func (w WorkResult) oursUser() float64 {
	switch {
	case w.HasOurs:
		return w.Ours.User
	case w.HasMarkers:
		return w.Markers.User
	}
	return math.NaN()
}

// oursKernel is the kernel figure the ratio takes: ours by the markers
// where the rounds reported it, else by the method. The method's windows
// on our benchmark hold, besides its loops, its Go runtime's page faults
// after the first post: clear_page_erms alone differed by up to 4.6
// million instructions between a work run and the next (about 1100 fresh
// pages), which the difference of two runs does not cancel (up to 26% of
// send's kernel work at 500 and 1000 operations). perftest, a C program
// that allocates before its loop, carries 20-60 such instructions per
// operation; by the method it agreed with our markers' figure within
// 2.4% for every tool and size. The method's figure of ours stays the
// check.
func (w WorkResult) oursKernel() float64 {
	if w.HasMarkers && w.Markers.HasKernelWork {
		return comparedKernel(w.Markers)
	}
	if w.HasOurs {
		return comparedKernel(w.Ours)
	}
	return math.NaN()
}

// comparedKernel is the kernel's figure the table compares: kernel work
// (kernel-work-insns/op, work.Counts.KernelWork), on every vCPU with
// time's part left out, so that READ's work in ksoftirqd on another vCPU
// counts and the timer's does not. NaN where the plugin did not know the
// kernel's roles: the plugin's other kernel parts follow time (on all
// vCPUs a loaded host moved them by tens of thousands of instructions per
// operation between runs), so none stands in for it.
func comparedKernel(p work.PerOp) float64 {
	if !p.HasKernelWork {
		return math.NaN()
	}
	return p.KernelWork
}

// ErrWorkCheck means the method's figure of ours is further from our
// markers' than the tolerance.
var ErrWorkCheck = errors.New("the work method disagrees with our markers")

// checkWithin returns ErrWorkCheck when both of ours' figures are there
// and user differs by more than tol, or the kernel's (comparedKernel) by
// more than ktol or is missing on either side (fractions; 0: no check of
// that part).
func (w WorkResult) checkWithin(tol, ktol float64) error {
	if !w.HasOurs || !w.HasMarkers {
		return nil
	}
	for _, p := range []struct {
		name            string
		method, markers float64
		tol             float64
	}{{"user", w.Ours.User, w.Markers.User, tol}, {"kernel", comparedKernel(w.Ours), comparedKernel(w.Markers), ktol}} {
		if p.tol <= 0 {
			continue
		}
		if !(p.markers > 0) || !(math.Abs(p.method/p.markers-1) <= p.tol) { // NaN: no figure, a failed check
			return fmt.Errorf("%w: %s %.1f by the method, %.1f by the markers (tolerance %g%%)", ErrWorkCheck, p.name, p.method, p.markers, 100*p.tol)
		}
	}
	return nil
}
