package verbs

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pairing is a way to get two devices for a connection: loopback on one, or
// from the peer device to the test device (rxe1 -> rxe0 across the veth in
// the VM).
type pairing struct {
	name string
	open func(t *testing.T) (src, dst *Context)
}

var pairings = []pairing{
	{"loopback", func(t *testing.T) (*Context, *Context) {
		ctx := openDevice(t)
		return ctx, ctx
	}},
	{"cross", func(t *testing.T) (*Context, *Context) {
		dst := mustHaveDevice(t)
		src := mustHavePeerDevice(t)
		return openNamed(t, src), openNamed(t, dst)
	}},
}

func TestRCOps(t *testing.T) {
	const n = 256
	for _, p := range pairings {
		t.Run(p.name, func(t *testing.T) {
			srcCtx, dstCtx := p.open(t)
			src, dst := newSide(t, srcCtx, RC), newSide(t, dstCtx, RC)
			connect(t, src, dst)
			t.Logf("%s gid %v qp %#x -> %s gid %v qp %#x", srcCtx.Name(), src.gid, src.qp.Num(), dstCtx.Name(), dst.gid, dst.qp.Num())
			sb, db := src.mr.Bytes(), dst.mr.Bytes()

			t.Run("write", func(t *testing.T) {
				pattern(sb[:n], 1)
				clear(db)
				require.NoError(t, src.qp.PostSend(&SendWR{ID: 1, Op: OpWrite, Local: src.mr.SGE(0, n),
					RemoteAddr: dst.mr.Addr() + 100, RKey: dst.mr.RKey(), Flags: FlagSignaled}))
				wc := pollOne(t, src.cq)
				assert.Equal(t, uint64(1), wc.WRID)
				assert.Equal(t, WCWrite, wc.Opcode)
				assert.Equal(t, sb[:n], db[100:100+n])
				assert.Equal(t, make([]byte, 100), db[:100], "nothing written before the target")
			})
			t.Run("write-inline", func(t *testing.T) {
				pattern(sb[:2], 9)
				clear(db[:2])
				require.NoError(t, src.qp.PostSend(&SendWR{ID: 2, Op: OpWrite, Local: SGE{Addr: src.mr.Addr(), Len: 2},
					RemoteAddr: dst.mr.Addr(), RKey: dst.mr.RKey(), Flags: FlagSignaled | FlagInline}))
				pollOne(t, src.cq)
				assert.Equal(t, sb[:2], db[:2])
			})
			t.Run("write-imm", func(t *testing.T) {
				pattern(sb[:n], 2)
				clear(db)
				require.NoError(t, dst.qp.PostRecv(30, SGE{}))
				require.NoError(t, src.qp.PostSend(&SendWR{ID: 3, Op: OpWriteImm, Local: src.mr.SGE(0, n),
					RemoteAddr: dst.mr.Addr(), RKey: dst.mr.RKey(), Imm: 0xdeadbeef, Flags: FlagSignaled}))
				pollOne(t, src.cq)
				wc := pollOne(t, dst.cq)
				assert.Equal(t, uint64(30), wc.WRID)
				assert.Equal(t, WCRecvWriteImm, wc.Opcode)
				assert.Equal(t, uint32(0xdeadbeef), wc.Imm)
				assert.NotZero(t, wc.Flags&WCFlagWithImm)
				assert.Equal(t, uint32(n), wc.ByteLen)
				assert.Equal(t, sb[:n], db[:n])
			})
			t.Run("read", func(t *testing.T) {
				pattern(db[:n], 3)
				clear(sb)
				require.NoError(t, src.qp.PostSend(&SendWR{ID: 4, Op: OpRead, Local: src.mr.SGE(8, n),
					RemoteAddr: dst.mr.Addr(), RKey: dst.mr.RKey(), Flags: FlagSignaled}))
				wc := pollOne(t, src.cq)
				assert.Equal(t, WCRead, wc.Opcode)
				assert.Equal(t, db[:n], sb[8:8+n])
			})
			t.Run("send", func(t *testing.T) {
				pattern(sb[:n], 4)
				clear(db)
				require.NoError(t, dst.qp.PostRecv(50, dst.mr.SGE(0, bufSize)))
				require.NoError(t, src.qp.PostSend(&SendWR{ID: 5, Op: OpSendImm, Local: src.mr.SGE(0, n), Imm: 77, Flags: FlagSignaled}))
				wc := pollOne(t, src.cq)
				assert.Equal(t, WCSend, wc.Opcode)
				wc = pollOne(t, dst.cq)
				assert.Equal(t, uint64(50), wc.WRID)
				assert.Equal(t, WCRecv, wc.Opcode)
				assert.Equal(t, uint32(n), wc.ByteLen)
				assert.Equal(t, uint32(77), wc.Imm)
				assert.Equal(t, dst.qp.Num(), wc.QPNum)
				assert.Equal(t, sb[:n], db[:n])
			})

			// Atomics act on 8 aligned bytes in host byte order; the old value
			// lands in the local SGE.
			ne := binary.NativeEndian
			for _, tc := range []struct {
				name              string
				op                Opcode
				old, cmpAdd, swap uint64
				want              uint64
			}{
				{"fetch-add", OpAtomicFetchAdd, 1000, 234, 0, 1234},
				{"cmp-swap-hit", OpAtomicCmpSwap, 0x1122334455667788, 0x1122334455667788, 42, 42},
				{"cmp-swap-miss", OpAtomicCmpSwap, 7, 8, 42, 7},
			} {
				t.Run(tc.name, func(t *testing.T) {
					ne.PutUint64(db[64:], tc.old)
					clear(sb[:16])
					require.NoError(t, src.qp.PostSend(&SendWR{ID: 6, Op: tc.op, Local: src.mr.SGE(8, 8),
						RemoteAddr: dst.mr.Addr() + 64, RKey: dst.mr.RKey(), CompareAdd: tc.cmpAdd, Swap: tc.swap, Flags: FlagSignaled}))
					pollOne(t, src.cq)
					assert.Equal(t, tc.old, ne.Uint64(sb[8:]), "returned old value")
					assert.Equal(t, tc.want, ne.Uint64(db[64:]), "remote value")
				})
			}
		})
	}
}

func TestUC(t *testing.T) {
	const n = 200
	for _, p := range pairings {
		t.Run(p.name, func(t *testing.T) {
			srcCtx, dstCtx := p.open(t)
			src, dst := newSide(t, srcCtx, UC), newSide(t, dstCtx, UC)
			connect(t, src, dst)
			sb, db := src.mr.Bytes(), dst.mr.Bytes()

			pattern(sb[:n], 5)
			require.NoError(t, src.qp.PostSend(&SendWR{ID: 1, Op: OpWrite, Local: src.mr.SGE(0, n),
				RemoteAddr: dst.mr.Addr(), RKey: dst.mr.RKey(), Flags: FlagSignaled}))
			pollOne(t, src.cq)
			// UC has no acknowledgement: the sender's completion does not mean
			// the data arrived. A SEND behind it does, once received.
			pattern(sb[1000:1000+n], 6)
			require.NoError(t, dst.qp.PostRecv(2, dst.mr.SGE(2000, n)))
			require.NoError(t, src.qp.PostSend(&SendWR{ID: 3, Op: OpSend, Local: src.mr.SGE(1000, n), Flags: FlagSignaled}))
			pollOne(t, src.cq)
			wc := pollOne(t, dst.cq)
			assert.Equal(t, WCRecv, wc.Opcode)
			assert.Equal(t, uint32(n), wc.ByteLen)
			assert.Equal(t, sb[:n], db[:n], "UC write")
			assert.Equal(t, sb[1000:1000+n], db[2000:2000+n], "UC send")
		})
	}
}

func TestUDSend(t *testing.T) {
	const n, grh = 300, 40
	for _, p := range pairings {
		t.Run(p.name, func(t *testing.T) {
			srcCtx, dstCtx := p.open(t)
			src, dst := newSide(t, srcCtx, UD), newSide(t, dstCtx, UD)
			connect(t, src, dst)
			ah, err := src.pd.CreateAH(AHAttr{Port: 1, DGID: dst.gid.Raw, SGIDIndex: src.gid.Index})
			require.NoError(t, err)
			defer func() { require.NoError(t, ah.Close()) }()

			sb, db := src.mr.Bytes(), dst.mr.Bytes()
			pattern(sb[:n], 7)
			clear(db)
			require.NoError(t, dst.qp.PostRecv(9, dst.mr.SGE(0, grh+n)))
			require.NoError(t, src.qp.PostSend(&SendWR{ID: 8, Op: OpSend, Local: src.mr.SGE(0, n), Flags: FlagSignaled,
				AH: ah, RemoteQPN: dst.qp.Num(), RemoteQKey: testQKey}))
			pollOne(t, src.cq)
			wc := pollOne(t, dst.cq)
			assert.Equal(t, uint64(9), wc.WRID)
			assert.Equal(t, WCRecv, wc.Opcode)
			assert.Equal(t, uint32(grh+n), wc.ByteLen, "the GRH counts")
			assert.NotZero(t, wc.Flags&WCFlagGRH)
			assert.Equal(t, src.qp.Num(), wc.SrcQP)
			assert.Equal(t, sb[:n], db[grh:grh+n])
		})
	}
}
