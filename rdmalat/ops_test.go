//go:build linux

package rdmalat_test

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/loops"
	"github.com/rdmabench/rdmabench/internal/rdmalattest"
	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/latency"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// These tests drive every operation and variant on a real device (rxe0 in
// the soft-RoCE VM, rxe1 for cross-device), each proving that it measures
// what it says; elsewhere they skip unless a device is promised.

type variant struct {
	op     spec.Op
	tr     spec.Transport
	events bool
}

func (v variant) String() string {
	s := fmt.Sprintf("%v/%v", v.op, v.tr)
	if v.events {
		s += "/events"
	}
	return s
}

// variants is every operation over every transport that carries it, and
// events for every operation that allows them.
func variants() []variant {
	var vs []variant
	for _, op := range spec.Ops {
		for _, tr := range spec.Transports {
			if tr.Carries(op) != nil {
				continue
			}
			vs = append(vs, variant{op, tr, false})
			if op.Events() {
				vs = append(vs, variant{op, tr, true})
			}
		}
	}
	return vs
}

// sizesFor is the sizes each variant is tried at: 2 B and 4 KiB, 8 B for
// atomics, and for UD the largest that fits the path MTU.
func sizesFor(v variant, mtu int) []int {
	switch {
	case v.op.Atomic():
		return []int{8}
	case v.tr == spec.UD:
		return []int{2, mtu}
	}
	return []int{2, 4096}
}

func newPair(t *testing.T, v variant, peerDevice string, maxSize int) *rdmalat.Pair {
	t.Helper()
	c := testenv.MustHaveRDMA(t)
	cpus, err := rdmalat.DefaultCPUs()
	require.NoError(t, err)
	p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
		Endpoint: rdmalat.EndpointConfig{
			Device: c.Device, GIDIndex: c.GIDIndex, Op: v.op, Transport: v.tr, Events: v.events,
			MaxSize: maxSize, Inline: c.Inline, MTU: c.MTU,
		},
		PeerDevice: peerDevice, CPUs: cpus, Timeout: 5 * time.Second,
	})
	require.NoError(t, err, "%v", v)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return p
}

// runSamples runs n samples after warmup and returns them; Close checks
// that the responder answered every round trip (ping-pong operations).
func runSamples(t *testing.T, p *rdmalat.Pair, size, warmup, n int) (*latency.Recorder, uint64) {
	t.Helper()
	run, err := p.Start(size, warmup)
	require.NoError(t, err)
	defer run.Close()
	rec := latency.NewRecorder(p.Local.Op().Halved())
	allocs := testing.AllocsPerRun(n, func() {
		rtt, err := run.Next()
		if err != nil {
			panic(err) // AllocsPerRun gives no way out; fail loudly
		}
		rec.Record(rtt)
	})
	assert.Zero(t, allocs, "allocations per sample")
	ops := run.RoundTrips()
	require.NoError(t, run.Close())
	return rec, ops
}

// Every operation and variant runs at its sizes, with 0 allocations per
// sample, every counter, immediate and UD source checked by the loops.
func TestEveryOperation(t *testing.T) {
	for _, v := range variants() {
		t.Run(v.String(), func(t *testing.T) {
			p := newPair(t, v, "", 4096)
			for _, size := range sizesFor(v, p.Local.Device().MTU) {
				rec, _ := runSamples(t, p, size, 10, 200)
				s := rec.Summary()
				assert.Equal(t, int64(201), s.Count) // AllocsPerRun runs once more first
				assert.Positive(t, s.Min)
				t.Logf("%v size %d: p50 %.1f us, p99 %.1f us", v, size, quantile(s, 500000)/1e3, quantile(s, 990000)/1e3)
			}
		})
	}
}

func quantile(s latency.Summary, p latency.PPM) float64 {
	for _, q := range s.Percentiles {
		if q.P == p {
			return q.Value
		}
	}
	return 0
}

func TestOperationsCrossDevice(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	second := testenv.MustHaveSecondDevice(t, c)
	for _, v := range []variant{{spec.Read, spec.RC, false}, {spec.Send, spec.UD, false}, {spec.WriteImm, spec.UC, true}, {spec.FetchAdd, spec.RC, false}} {
		t.Run(v.String(), func(t *testing.T) {
			p := newPair(t, v, second, 1024)
			require.NotEqual(t, p.Local.Device().Name, p.PeerDevice.Name)
			runSamples(t, p, sizesFor(v, 1024)[0], 10, 200)
		})
	}
}

// A responder that stops answering ends the initiator's wait with
// ErrTimeout within the timeout, whether it polls a receive CQ or sleeps
// on a completion channel.
func TestReceiverGoneTimesOut(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	const timeout = 500 * time.Millisecond
	for _, v := range []variant{{spec.Send, spec.UD, false}, {spec.SendImm, spec.RC, true}, {spec.WriteImm, spec.UC, true}} {
		t.Run(v.String(), func(t *testing.T) {
			p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
				Endpoint: rdmalat.EndpointConfig{Device: c.Device, GIDIndex: c.GIDIndex, Op: v.op, Transport: v.tr, Events: v.events, MaxSize: 64},
				Timeout:  timeout, // both threads unpinned
			})
			require.NoError(t, err)
			defer func() { assert.NoError(t, p.Close()) }()
			elapsed, err := rdmalattest.NextAfterPeerGone(t, p)
			assert.ErrorIs(t, err, rdmalat.ErrTimeout)
			assert.ErrorContains(t, err, "no answer from the peer within 500ms (RDMABENCH_TIMEOUT)")
			assert.Less(t, elapsed, timeout+3*time.Second)
		})
	}
}

// READ returns the peer's bytes.
func TestReadReturnsPeerBytes(t *testing.T) {
	p := newPair(t, variant{spec.Read, spec.RC, false}, "", 4096)
	peer := rdmalat.PeerReceiveHalf(p)
	for i := range peer {
		peer[i] = byte(i*7 + 3)
	}
	runSamples(t, p, 4096, 0, 20)
	assert.Equal(t, peer, rdmalat.LocalSendHalf(p))
}

// FETCH_AND_ADD returns the previous value (the loop checks each) and the
// peer's word grows by exactly the number of operations, run after run.
func TestFetchAddCounts(t *testing.T) {
	for _, events := range []bool{false, true} {
		p := newPair(t, variant{spec.FetchAdd, spec.RC, events}, "", 8)
		word := func() uint64 { return binary.LittleEndian.Uint64(rdmalat.PeerReceiveHalf(p)) }
		require.Zero(t, word())
		var total uint64
		for range 2 {
			_, ops := runSamples(t, p, 8, 5, 100)
			total += ops
			assert.Equal(t, total, word(), "events %v: the word counts every operation", events)
		}
	}
}

// COMPARE_AND_SWAP swaps every time in the loop (compare with the word's
// value, swap in + 1), and not when the compare value is wrong.
func TestCompareSwap(t *testing.T) {
	p := newPair(t, variant{spec.CompareSwap, spec.RC, false}, "", 8)
	word := func() uint64 { return binary.LittleEndian.Uint64(rdmalat.PeerReceiveHalf(p)) }
	_, ops := runSamples(t, p, 8, 5, 100)
	require.Equal(t, ops, word(), "every operation swapped")

	old, err := rdmalat.CompareSwap(p, ops+5, 999)
	require.NoError(t, err)
	assert.Equal(t, ops, old, "the old value comes back")
	assert.Equal(t, ops, word(), "a wrong compare value does not swap")

	old, err = rdmalat.CompareSwap(p, ops, 999)
	require.NoError(t, err)
	assert.Equal(t, ops, old)
	assert.Equal(t, uint64(999), word(), "the right compare value swaps")

	// The next run starts from the word's value, whatever it is.
	_, more := runSamples(t, p, 8, 0, 50)
	assert.Equal(t, 999+more, word())
}

// Each ping-pong loop checks what arrives: a counter 42 where the
// responder expects 1 (in the polled byte, the payload's last byte, or the
// immediate) ends the run with ErrOrder naming both values. (The write
// initiator may see it first: its polled byte, still 0, is not 42.)
func TestCountersChecked(t *testing.T) {
	for _, v := range []variant{{spec.Write, spec.RC, false}, {spec.WriteImm, spec.RC, false}, {spec.Send, spec.UC, false}, {spec.SendImm, spec.UD, true}} {
		t.Run(v.String(), func(t *testing.T) {
			p := newPair(t, v, "", 64)
			run, err := p.Start(2, 0)
			require.NoError(t, err)
			defer run.Close()
			rdmalat.SkewCounter(run, 41)
			_, err = run.Next()
			require.ErrorIs(t, err, rdmalat.ErrOrder)
			assert.Regexp(t, `got counter (42, want 1|0, want 42)$`, err.Error())
			t.Log(err)
		})
	}
}

// UD answers come from the responder's QP: expecting another QPN fails.
func TestUDSourceChecked(t *testing.T) {
	p := newPair(t, variant{spec.Send, spec.UD, false}, "", 64)
	runSamples(t, p, 64, 0, 50) // every source matched
	run, err := p.Start(2, 0)
	require.NoError(t, err)
	defer run.Close()
	want := rdmalat.ResponderQPN(p)
	rdmalat.ExpectSource(run, want+1)
	_, err = run.Next()
	require.ErrorIs(t, err, rdmalat.ErrOrder)
	assert.ErrorContains(t, err, fmt.Sprintf("came from QP %#x, not from the peer's QP %#x", want, want+1))
}

// cpuPerOp runs n samples and returns the initiator thread's CPU time
// (user + system, RUSAGE_THREAD) and the wall time, per sample.
func cpuPerOp(t *testing.T, p *rdmalat.Pair, size, n int) (cpu, wall time.Duration, sleeps float64) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	run, err := p.Start(size, 10)
	require.NoError(t, err)
	defer run.Close()
	var before, after unix.Rusage
	require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &before))
	start := time.Now()
	for range n {
		_, err := run.Next()
		require.NoError(t, err)
	}
	wall = time.Since(start)
	require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &after))
	require.NoError(t, run.Close())
	used := time.Duration(after.Utime.Nano()-before.Utime.Nano()) + time.Duration(after.Stime.Nano()-before.Stime.Nano())
	return used / time.Duration(n), wall / time.Duration(n), float64(after.Nvcsw-before.Nvcsw) / float64(n)
}

// Events (perftest -e) sleep in the kernel until a completion arrives
// instead of spinning, which is what they are for: leaving the CPU to
// others. Both threads of a send ping-pong share one CPU here. Polling,
// each side spins until the scheduler preempts it for the other (about
// half of each round trip each, and round trips of a scheduler time
// slice); with events the initiator sleeps while the responder answers,
// and uses far less CPU time per round trip (measured in the VM on a
// loaded host: 24-32 ms polling, 0.3-3.5 ms with events). (Measured
// on the initiator's thread, getrusage RUSAGE_THREAD. On separate CPUs
// the saving on rxe is smaller: rxe's "device" is kernel code run by the
// posting thread, so each side's own message costs CPU in both modes, and
// a READ completes inside ibv_post_send with no wait to save at all.)
func TestEventsSaveCPU(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	cpus, err := rdmalat.DefaultCPUs()
	require.NoError(t, err)
	shared := func(events bool) *rdmalat.Pair {
		p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
			Endpoint: rdmalat.EndpointConfig{Device: c.Device, GIDIndex: c.GIDIndex, Op: spec.Send, Events: events, MaxSize: 64, Inline: c.Inline},
			CPUs:     [2]env.CPU{cpus[0], cpus[0]}, Timeout: 5 * time.Second,
		})
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, p.Close()) })
		return p
	}
	pc, pw, ps := cpuPerOp(t, shared(false), 2, 100)
	ec, ew, es := cpuPerOp(t, shared(true), 2, 100)
	t.Logf("one CPU for both sides: polling %v CPU of %v per round trip, %.2f sleeps; events %v CPU of %v, %.2f sleeps", pc, pw, ps, ec, ew, es)
	assert.Greater(t, float64(pc), 0.4*float64(pw), "polling spins for its share of the CPU")
	// Sleeps (voluntary switches) are only logged: waking the responder on
	// the shared CPU often preempts the initiator, which then finds its
	// answer waiting without sleeping.
	assert.Less(t, float64(ec), float64(pc)/3, "events use far less CPU per round trip")
}

// An operation or variant the transport, the device or the size cannot
// do fails with a message naming it.
func TestUnsupportedVariants(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	for _, tc := range []struct {
		v    variant
		want string
	}{
		{variant{spec.Read, spec.UC, false}, "read over uc: UC has no RDMA READ or atomics; use rc"},
		{variant{spec.FetchAdd, spec.UC, false}, "fetch_add over uc"},
		{variant{spec.Write, spec.UD, false}, "write over ud: UD carries sends only"},
		{variant{spec.Write, spec.RC, true}, "events (perftest -e) with write"},
	} {
		ep, err := rdmalat.NewEndpoint(rdmalat.EndpointConfig{Device: c.Device, GIDIndex: -1, Op: tc.v.op, Transport: tc.v.tr, Events: tc.v.events, MaxSize: 64})
		assert.ErrorContains(t, err, tc.want, "%v", tc.v)
		assert.Nil(t, ep)
	}
	_, err := spec.ParseTransport("xrc")
	assert.ErrorContains(t, err, `unknown transport "xrc": want rc, uc or ud`, "rxe has no XRC or DC, and neither do we")

	p := newPair(t, variant{spec.FetchAdd, spec.RC, false}, "", 64)
	_, err = p.Start(64, 0)
	assert.ErrorContains(t, err, "size 64: fetch_add moves exactly 8 bytes")

	ud := newPair(t, variant{spec.Send, spec.UD, false}, "", 8192)
	mtu := ud.Local.Device().MTU
	_, err = ud.Start(mtu+1, 0)
	assert.ErrorContains(t, err, fmt.Sprintf("a UD message must fit in one MTU (%d bytes)", mtu))
	runSamples(t, ud, mtu, 0, 10) // the pair still works at the MTU
}

// BenchmarkOperations measures every operation and variant at its sizes
// through Measure, one loopback pair per variant (benchstat -col /op or
// /qp). The suite's user-facing benchmarks are the root package's.
func BenchmarkOperations(b *testing.B) {
	c := testenv.MustHaveRDMA(b)
	cpus, err := rdmalat.DefaultCPUs()
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range variants() {
		p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
			Endpoint: rdmalat.EndpointConfig{Device: c.Device, GIDIndex: c.GIDIndex, Op: v.op, Transport: v.tr,
				Events: v.events, MaxSize: 4096, Inline: c.Inline, MTU: c.MTU},
			CPUs: cpus, Timeout: 5 * time.Second,
		})
		if err != nil {
			b.Fatalf("%v: %v", v, err)
		}
		for _, size := range sizesFor(v, p.Local.Device().MTU) {
			b.Run(fmt.Sprintf("op=%v/qp=%v/events=%v/size=%d", v.op, v.tr, v.events, size), func(b *testing.B) {
				rdmalat.Measure(b, p, size, 200, nil)
			})
		}
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// On UD and UC the receives are pre-posted as perftest does and none is
// reposted while plenty remain; on RC each is reposted as it completes.
// A run longer than the pre-posted receives goes back to reposting
// each, and the next run on the same pair finds them topped up again.
func TestReceivesPrepostedAsPerftest(t *testing.T) {
	for _, v := range []variant{{spec.Send, spec.UD, false}, {spec.Send, spec.UC, false}, {spec.Send, spec.RC, false}} {
		t.Run(v.String(), func(t *testing.T) {
			p := newPair(t, v, "", 64)
			runSamples(t, p, 2, 0, 100)
			posted := rdmalat.ReceivesPosted(p.Local)
			if v.tr == spec.RC {
				assert.Equal(t, loops.DefaultRxDepth, posted, "RC reposts each receive")
				return
			}
			assert.Less(t, posted, loops.PrepostMax-100, "a receive was reposted")
			assert.Greater(t, posted, loops.PrepostMax-200, "receives missing after 100 round trips")
			const n = loops.PrepostMax + 600
			for run := 0; run < 2; run++ {
				rec, _ := runSamples(t, p, 2, 0, n)
				assert.Equal(t, int64(n+1), rec.Summary().Count, "run %d", run)
				assert.GreaterOrEqual(t, rdmalat.ReceivesPosted(p.Local), loops.DefaultRxDepth-1, "run %d", run)
			}
		})
	}
}

// A run told its length runs it in one C call: one lead round trip, not
// one per chunk (16, 32, ... 4096) as without it.
func TestExpectedRunIsOneCall(t *testing.T) {
	p := newPair(t, variant{spec.Write, spec.RC, false}, "", 64)
	for _, expect := range []bool{false, true} {
		run, err := p.Start(2, 10)
		require.NoError(t, err)
		if expect {
			run.Expect(3000)
		}
		for range 3000 {
			_, err := run.Next()
			require.NoError(t, err)
		}
		want := uint64(10 + 3000 + 1)
		if !expect {
			want = 10 + 16 + 32 + 64 + 128 + 256 + 512 + 1024 + 2048 + 8 // 8 chunks with their leads
		}
		assert.Equal(t, want, run.RoundTrips(), "Expect %v", expect)
		require.NoError(t, run.Close())
	}
}
