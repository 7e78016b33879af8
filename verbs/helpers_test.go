package verbs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Under emulation everything is slow: completion deadlines are seconds.
const pollTimeout = 10 * time.Second

// side is one end of a test connection: its own PD, CQ, QP and buffer.
type side struct {
	ctx  *Context
	pd   *PD
	cq   *CQ
	qp   *QP
	mr   *MR
	gid  GID
	port uint8
}

const bufSize = 4096

func newSide(t testing.TB, ctx *Context, typ QPType) *side {
	t.Helper()
	s := &side{ctx: ctx, port: 1}
	var err error
	s.gid, err = ctx.BestGID(s.port)
	require.NoError(t, err)
	s.pd, err = ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.pd.Close()) })
	s.cq, err = ctx.CreateCQ(64, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.cq.Close()) })
	s.mr, err = s.pd.AllocMR(bufSize, AccessAll)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.mr.Close()) })
	s.qp, err = s.pd.CreateQP(QPConfig{Type: typ, SendCQ: s.cq, MaxSendWR: 16, MaxRecvWR: 16, MaxInlineData: 64})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.qp.Close()) })
	return s
}

const testQKey = 0x11111111

// connect moves both QPs to RTS, each pointing at the other (for UD, only
// the local parts).
func connect(t testing.TB, a, b *side) {
	t.Helper()
	pairs := [][2]*side{{a, b}, {b, a}}
	if a == b {
		pairs = pairs[:1] // a QP connected to itself
	}
	for _, p := range pairs {
		l, r := p[0], p[1]
		require.NoError(t, l.qp.ToInit(InitAttr{Port: l.port, Access: AccessAll, QKey: testQKey}))
		require.NoError(t, l.qp.ToRTR(RTRAttr{
			DestQPN:  r.qp.Num(),
			RQPSN:    r.qp.Num() * 7,
			DGID:     r.gid.Raw,
			GIDIndex: l.gid.Index,
		}))
		require.NoError(t, l.qp.ToRTS(RTSAttr{SQPSN: l.qp.Num() * 7}))
	}
}

// pollOne waits for one completion on cq and requires it to be successful.
func pollOne(t testing.TB, cq *CQ) WorkCompletion {
	t.Helper()
	var wc [1]WorkCompletion
	deadline := time.Now().Add(pollTimeout)
	for {
		n, err := cq.Poll(wc[:])
		require.NoError(t, err)
		if n == 1 {
			require.NoError(t, wc[0].Err())
			return wc[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completion within %v", pollTimeout)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// pattern fills b with bytes derived from seed.
func pattern(b []byte, seed byte) {
	for i := range b {
		b[i] = seed + byte(i*7)
	}
}
