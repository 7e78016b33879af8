// Package cpuprobe measures what sysfs cannot show: whether the CPUs a
// benchmark busy-polls on slow each other down when all of them are busy.
//
// Every latency loop is two busy-polling threads. On a cloud VM whose
// vCPUs are hyperthreads of one core, or are time-shared by the
// hypervisor, each of those threads runs at a fraction of its speed
// alone, and the fraction changes every few hundred milliseconds; under
// emulation (rxevm on such a host) latency turns bimodal within a run
// and drifts between runs and boots. hostinfo's smt check sees siblings
// only where the topology is exposed, and a hypervisor's time-sharing is
// exposed nowhere, so the probe times it: a fixed piece of work on each
// CPU alone, then on all of them at once.
package cpuprobe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/hostinfo"
)

// Options says what to probe and for how long. The zero values of Block
// and Blocks take the defaults, about 1 s in all for two CPUs.
type Options struct {
	CPUs   []int         // the CPUs to probe, at least two
	From   string        // the flag or variable CPUs came from, for errors (default "CPUs")
	Block  time.Duration // the time one block of work takes alone (default 5ms)
	Blocks int           // blocks timed per CPU and phase (default 60)
}

const (
	defaultBlock  = 5 * time.Millisecond
	defaultBlocks = 60
)

// CPUResult is one CPU's block times: the median and 90th percentile
// alone, and the median, 90th percentile and slowest with every probed
// CPU busy.
type CPUResult struct {
	CPU                          int
	Alone, AloneP90              time.Duration
	Together, TogetherP90, Worst time.Duration
}

// Result is a probe's outcome, CPU by CPU in the order probed.
type Result struct{ CPUs []CPUResult }

// Contention sums the result up, each figure the worst CPU's.
func (r Result) Contention() hostinfo.Contention {
	c := hostinfo.Contention{}
	ratio := func(a, b time.Duration) float64 {
		if b <= 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	for _, x := range r.CPUs {
		c.CPUs = append(c.CPUs, x.CPU)
		c.Slowdown = max(c.Slowdown, ratio(x.Together, x.Alone))
		c.Unsteady = max(c.Unsteady, ratio(x.AloneP90, x.Alone), ratio(x.TogetherP90, x.Together))
		c.Worst = max(c.Worst, ratio(x.Worst, x.Alone))
	}
	return c
}

// Line is the result as a note (a measurement: see hostinfo.Report.Notes),
// "cpu-contention: 1.62x with all busy, p90 1.20x the median, worst 2.50x; CPUs 0-1".
func (r Result) Line() hostinfo.Line {
	return hostinfo.Line{Key: "cpu-contention", Value: r.Contention().String()}
}

// Warning returns the "cpu-contention" warning when the CPUs slow each
// other, or run unsteadily, by more than hostinfo.ContentionThreshold.
func (r Result) Warning() (hostinfo.Warning, bool) {
	c := r.Contention()
	return c.Warning("cpu-contention", "CPUs "+env.FormatCPUList(c.CPUs))
}

// Probe times Blocks blocks of work on each CPU alone, then on all of them
// at once, each on a thread pinned to its CPU. It stops early, with the
// context's error, when ctx ends.
func Probe(ctx context.Context, o Options) (Result, error) {
	if err := o.check(); err != nil {
		return Result{}, err
	}
	if o.Block <= 0 {
		o.Block = defaultBlock
	}
	if o.Blocks <= 0 {
		o.Blocks = defaultBlocks
	}
	iters, err := calibrate(o.CPUs[0], o.Block)
	if err != nil {
		return Result{}, err
	}
	r := Result{CPUs: make([]CPUResult, len(o.CPUs))}
	for i, cpu := range o.CPUs {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		times, err := onCPU(cpu, func() []time.Duration { return timeBlocks(iters, o.Blocks) })
		if err != nil {
			return Result{}, err
		}
		r.CPUs[i] = CPUResult{CPU: cpu, Alone: quantile(times, 0.5), AloneP90: quantile(times, 0.9)}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	together, err := allAtOnce(o.CPUs, iters, o.Blocks)
	if err != nil {
		return Result{}, err
	}
	for i, times := range together {
		r.CPUs[i].Together, r.CPUs[i].TogetherP90, r.CPUs[i].Worst = quantile(times, 0.5), quantile(times, 0.9), slices.Max(times)
	}
	return r, nil
}

func (o Options) check() error {
	if len(o.CPUs) < 2 {
		return fmt.Errorf("cpuprobe: want at least two CPUs, those the benchmark polls on (e.g. 0,1); got %d", len(o.CPUs))
	}
	seen := map[int]bool{}
	for _, c := range o.CPUs {
		if seen[c] {
			return fmt.Errorf("cpuprobe: CPU %d given twice", c)
		}
		seen[c] = true
	}
	// env's check is the one rule of which CPUs this process may use.
	from := cmp.Or(o.From, "CPUs")
	if err := env.CheckCPUs(from, o.CPUs); err != nil {
		return fmt.Errorf("cpuprobe: %w", err)
	}
	return nil
}

// sink keeps the compiler from dropping the work.
var sink atomic.Uint64

// work is the probe's unit: a dependent chain of integer operations that
// touches no memory, so that it measures the CPU's share of a core and
// nothing else.
//
//go:noinline
func work(n int) {
	x := uint64(0x9E3779B97F4A7C15)
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	sink.Add(x)
}

// calibrate finds the iterations that take about block on cpu alone.
func calibrate(cpu int, block time.Duration) (int, error) {
	var iters int
	_, err := onCPU(cpu, func() []time.Duration {
		n := 1 << 12
		for {
			start := time.Now()
			work(n)
			d := time.Since(start)
			if d >= block/4 || n >= 1<<40 {
				iters = max(1, int(float64(n)*float64(block)/float64(max(d, 1))))
				return nil
			}
			n *= 2
		}
	})
	return iters, err
}

func timeBlocks(iters, blocks int) []time.Duration {
	work(iters) // warm up: the first block pays for the thread's start
	times := make([]time.Duration, blocks)
	for i := range times {
		start := time.Now()
		work(iters)
		times[i] = time.Since(start)
	}
	return times
}

// allAtOnce runs timeBlocks on every CPU at the same time.
func allAtOnce(cpus []int, iters, blocks int) ([][]time.Duration, error) {
	out := make([][]time.Duration, len(cpus))
	errs := make([]error, len(cpus))
	var ready, wg sync.WaitGroup
	start := make(chan struct{})
	ready.Add(len(cpus))
	for i, cpu := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var once sync.Once
			markReady := func() { once.Do(ready.Done) }
			out[i], errs[i] = onCPU(cpu, func() []time.Duration {
				markReady()
				<-start
				return timeBlocks(iters, blocks)
			})
			markReady() // pinning failed and f never ran
		}()
	}
	ready.Wait()
	close(start)
	wg.Wait()
	return out, errors.Join(errs...)
}

// onCPU runs f on a new OS thread pinned to cpu and returns its result.
// The thread is not returned to the Go scheduler: it ends with the
// goroutine, so no thread with a narrowed affinity outlives the probe.
func onCPU(cpu int, f func() []time.Duration) ([]time.Duration, error) {
	type result struct {
		times []time.Duration
		err   error
	}
	done := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if err := env.PinTo(cpu).Pin(0); err != nil {
			done <- result{err: fmt.Errorf("cpuprobe: pin to CPU %d: %w", cpu, err)}
			return
		}
		done <- result{times: f()}
	}()
	r := <-done
	return r.times, r.err
}

// quantile returns the q-quantile of ds, interpolated between the two
// nearest ranks.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + time.Duration((pos-float64(lo))*float64(s[lo+1]-s[lo]))
}

// Summary is the result in words for a log line.
func (r Result) Summary() string {
	c := r.Contention()
	return fmt.Sprintf("CPUs %s run a busy loop %.2fx slower with all busy than alone (worst block %.2fx); p90 block %.2fx the median",
		env.FormatCPUList(c.CPUs), c.Slowdown, c.Worst, c.Unsteady)
}
