package verbs

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/rdmacore"
)

func TestPostNotReady(t *testing.T) {
	ctx := openDevice(t)
	s := newSide(t, ctx, RC)
	assert.Equal(t, QPReset, s.qp.State())
	wr := &SendWR{Op: OpWrite, Local: s.mr.SGE(0, 8), Flags: FlagSignaled}
	err := s.qp.PostSend(wr)
	require.ErrorIs(t, err, ErrQPState)
	assert.Contains(t, err.Error(), "RESET, needs RTS")
	t.Log(err)
	require.ErrorIs(t, s.qp.PostRecv(1, s.mr.SGE(0, 8)), ErrQPState)

	require.NoError(t, s.qp.ToInit(InitAttr{Access: AccessAll}))
	assert.Equal(t, QPInit, s.qp.State())
	require.NoError(t, s.qp.PostRecv(1, s.mr.SGE(0, 8)), "receives may be posted in INIT")
	require.ErrorIs(t, s.qp.PostSend(wr), ErrQPState)

	// A transition the device refuses names itself.
	err = s.qp.ToRTS(RTSAttr{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "RTR->RTS")
	assert.Equal(t, QPInit, s.qp.State())
}

func TestAllocMRZero(t *testing.T) {
	ctx := openDevice(t)
	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	defer pd.Close()
	for _, n := range []int{0, -1} {
		_, err := pd.AllocMR(n, AccessLocalWrite)
		require.ErrorIs(t, err, syscall.EINVAL)
		assert.Contains(t, err.Error(), "size must be positive")
	}
}

func TestCloseOrder(t *testing.T) {
	ctx := openDevice(t)
	before := OpenObjects()
	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	mr, err := pd.AllocMR(100, AccessAll)
	require.NoError(t, err)
	assert.Equal(t, 100, mr.Len())
	assert.Len(t, mr.Bytes(), 100)
	assert.Equal(t, make([]byte, 100), mr.Bytes(), "zeroed")
	assert.NotZero(t, mr.LKey())
	assert.NotNil(t, rdmacore.Pointer(mr))
	ch, err := ctx.CreateCompChannel()
	require.NoError(t, err)
	cq, err := ctx.CreateCQ(8, ch)
	require.NoError(t, err)
	qp, err := pd.CreateQP(QPConfig{Type: RC, SendCQ: cq})
	require.NoError(t, err)
	after := OpenObjects()
	for _, k := range []string{"pd", "mr", "compchannel", "cq", "qp"} {
		assert.Equal(t, before[k]+1, after[k], k)
	}

	err = pd.Close()
	require.ErrorIs(t, err, ErrInUse)
	assert.Contains(t, err.Error(), "2 MRs, QPs or AHs still open")
	require.ErrorIs(t, ctx.Close(), ErrInUse)
	require.ErrorIs(t, cq.Close(), ErrInUse)
	require.ErrorIs(t, ch.Close(), ErrInUse)

	require.NoError(t, qp.Close())
	require.NoError(t, qp.Close(), "twice")
	require.NoError(t, mr.Close())
	require.NoError(t, mr.Close(), "twice")
	assert.Nil(t, rdmacore.Pointer(mr))
	require.NoError(t, cq.Close())
	require.NoError(t, ch.Close())
	require.NoError(t, pd.Close())
	require.NoError(t, pd.Close(), "twice")
	assert.Equal(t, before, OpenObjects())

	// Closed objects refuse work with os.ErrClosed.
	_, err = pd.AllocMR(10, 0)
	require.ErrorIs(t, err, os.ErrClosed)
	require.ErrorIs(t, qp.PostSend(&SendWR{}), os.ErrClosed)
	_, err = cq.Poll(make([]WorkCompletion, 1))
	require.ErrorIs(t, err, os.ErrClosed)

	// nil is closed already.
	require.NoError(t, (*Context)(nil).Close())
	require.NoError(t, (*PD)(nil).Close())
	require.NoError(t, (*MR)(nil).Close())
	require.NoError(t, (*CQ)(nil).Close())
	require.NoError(t, (*CompChannel)(nil).Close())
	require.NoError(t, (*QP)(nil).Close())
	require.NoError(t, (*AH)(nil).Close())
}

// TestCleanup checks the safety net: an object dropped without Close is
// released once it is garbage.
func TestCleanup(t *testing.T) {
	ctx := openDevice(t)
	before := OpenObjects()
	func() {
		pd, err := ctx.AllocPD()
		require.NoError(t, err)
		_, err = pd.AllocMR(4096, AccessLocalWrite)
		require.NoError(t, err)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		if OpenObjects()["pd"] == before["pd"] && OpenObjects()["mr"] == before["mr"] {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, before, OpenObjects())
}

func TestInlineTooLarge(t *testing.T) {
	ctx := openDevice(t)
	a, err := ctx.Query()
	require.NoError(t, err)
	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	defer pd.Close()
	cq, err := ctx.CreateCQ(4, nil)
	require.NoError(t, err)
	defer cq.Close()

	qp, err := pd.CreateQP(QPConfig{Type: RC, SendCQ: cq, MaxInlineData: uint32(a.MaxInlineData)})
	require.NoError(t, err, "the probed limit itself works")
	assert.GreaterOrEqual(t, qp.MaxInlineData(), uint32(a.MaxInlineData))
	require.NoError(t, qp.Close())

	_, err = pd.CreateQP(QPConfig{Type: RC, SendCQ: cq, MaxInlineData: 1 << 20})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInlineTooLarge)
	assert.Contains(t, err.Error(), fmt.Sprintf("max_inline_data 1048576 is above what %s accepts on RC queue pairs (at most %d)", ctx.Name(), a.MaxInlineData))

	// UD has its own limit, probed on its own.
	udLimit, err := ctx.MaxInline(UD)
	require.NoError(t, err)
	_, err = pd.CreateQP(QPConfig{Type: UD, SendCQ: cq, MaxInlineData: 1 << 20})
	assert.ErrorIs(t, err, ErrInlineTooLarge)
	assert.Contains(t, err.Error(), fmt.Sprintf("on UD queue pairs (at most %d)", udLimit))

	// Queue sizes above the device's are not called an inline problem.
	_, err = pd.CreateQP(QPConfig{Type: RC, SendCQ: cq, MaxSendWR: uint32(a.MaxQPWR) * 4, MaxInlineData: 16})
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrInlineTooLarge)
	assert.Contains(t, err.Error(), "refused these queue sizes")
	t.Log(err)
}

func TestCompChannel(t *testing.T) {
	ctx := openDevice(t)
	ch, err := ctx.CreateCompChannel()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ch.Close()) }) // after the CQ's cleanup

	start := time.Now()
	_, err = ch.Wait(start.Add(200 * time.Millisecond))
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	_, err = ch.Wait(time.Now().Add(-time.Second))
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "a past deadline")

	// With an event: a loopback send, completion requested on the CQ.
	s := newSideCh(t, ctx, ch)
	connect(t, s, s)
	require.NoError(t, s.cq.RequestNotify(false))
	require.NoError(t, s.qp.PostRecv(1, s.mr.SGE(0, 64)))
	require.NoError(t, s.qp.PostSend(&SendWR{ID: 2, Op: OpSend, Local: s.mr.SGE(64, 8), Flags: FlagSignaled}))
	got, err := ch.Wait(time.Now().Add(pollTimeout))
	require.NoError(t, err)
	assert.Same(t, s.cq, got)
	pollOne(t, s.cq)
	pollOne(t, s.cq)
}

// newSideCh is newSide with a CQ attached to ch.
func newSideCh(t *testing.T, ctx *Context, ch *CompChannel) *side {
	s := &side{ctx: ctx, port: 1}
	var err error
	s.gid, err = ctx.BestGID(1)
	require.NoError(t, err)
	s.pd, err = ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.pd.Close()) })
	s.cq, err = ctx.CreateCQ(16, ch)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.cq.Close()) })
	s.mr, err = s.pd.AllocMR(bufSize, AccessAll)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.mr.Close()) })
	s.qp, err = s.pd.CreateQP(QPConfig{Type: RC, SendCQ: s.cq})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.qp.Close()) })
	return s
}

func countFds(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents)
}

// TestHygiene creates, connects and destroys QP pairs in a loop and checks
// that nothing is left behind: open objects and file descriptors.
func TestHygiene(t *testing.T) {
	ctx := openDevice(t)
	n := 1000
	if testing.Short() {
		n = 50
	}
	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	defer pd.Close()
	cq, err := ctx.CreateCQ(16, nil)
	require.NoError(t, err)
	defer cq.Close()
	gid, err := ctx.BestGID(1)
	require.NoError(t, err)

	objs, fds := OpenObjects(), countFds(t)
	start := time.Now()
	for i := range n {
		a, err := pd.CreateQP(QPConfig{Type: RC, SendCQ: cq, MaxSendWR: 4, MaxRecvWR: 4})
		require.NoError(t, err, "pair %d", i)
		b, err := pd.CreateQP(QPConfig{Type: RC, SendCQ: cq, MaxSendWR: 4, MaxRecvWR: 4})
		require.NoError(t, err, "pair %d", i)
		for _, p := range [][2]*QP{{a, b}, {b, a}} {
			require.NoError(t, p[0].ToInit(InitAttr{Access: AccessAll}))
			require.NoError(t, p[0].ToRTR(RTRAttr{DestQPN: p[1].Num(), DGID: gid.Raw, GIDIndex: gid.Index}))
			require.NoError(t, p[0].ToRTS(RTSAttr{}))
		}
		require.NoError(t, a.Close())
		require.NoError(t, b.Close())
	}
	elapsed := time.Since(start)
	t.Logf("%d QP pairs created, connected and destroyed in %v (%v a pair)", n, elapsed, elapsed/time.Duration(n))
	assert.Equal(t, objs, OpenObjects())
	assert.LessOrEqual(t, countFds(t), fds, "file descriptors grew")
}

// TestRemoteAccessError writes with a wrong rkey: the completion carries
// the error and the QP goes to ERR, which QueryState sees.
func TestRemoteAccessError(t *testing.T) {
	ctx := openDevice(t)
	src, dst := newSide(t, ctx, RC), newSide(t, ctx, RC)
	connect(t, src, dst)
	st, err := src.qp.QueryState()
	require.NoError(t, err)
	assert.Equal(t, QPRTS, st)

	require.NoError(t, src.qp.PostSend(&SendWR{ID: 1, Op: OpWrite, Local: src.mr.SGE(0, 8),
		RemoteAddr: dst.mr.Addr(), RKey: dst.mr.RKey() ^ 0x5a5a, Flags: FlagSignaled}))
	var wc [1]WorkCompletion
	deadline := time.Now().Add(pollTimeout)
	for {
		n, err := src.cq.Poll(wc[:])
		require.NoError(t, err)
		if n == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no completion within %v", pollTimeout)
		time.Sleep(50 * time.Microsecond)
	}
	err = wc[0].Err()
	require.ErrorIs(t, err, WCRemAccessErr)
	t.Log(err)
	st, err = src.qp.QueryState()
	require.NoError(t, err)
	assert.Equal(t, QPErr, st)
	require.ErrorIs(t, src.qp.PostSend(&SendWR{Op: OpWrite}), ErrQPState)
}
