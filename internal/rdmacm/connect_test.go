package rdmacm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/verbs"
)

// pairings are the two ways the tests connect: loopback on one device
// (rxe0's address to itself), and from the second device to the first
// (rxe1 -> rxe0 across the veth in the VM).
var pairings = []struct {
	name  string
	cross bool
}{{"loopback", false}, {"cross", true}}

func sides(t *testing.T, cross bool, typ verbs.QPType) (server, client *side) {
	dev, second := devices(t)
	sctx := open(t, dev)
	cctx := sctx
	if cross {
		cctx = open(t, second)
	}
	return newSide(t, sctx, typ), newSide(t, cctx, typ)
}

// TestRC connects RC QPs through rdma_cm, then checks that an RDMA WRITE
// lands in the buffer the peer announced and a SEND arrives, byte for byte.
func TestRC(t *testing.T) {
	for _, p := range pairings {
		t.Run(p.name, func(t *testing.T) {
			checkLeaks(t)
			server, client := sides(t, p.cross, verbs.RC)
			pa, err := client.ctx.QueryPort(1)
			require.NoError(t, err)
			wantMTU := pa.ActiveMTU // rdma_cm's path MTU is the port's
			var srv, cli *Conn
			if p.cross {
				wantMTU = verbs.MTU256 // capped by Config.MTU
				srv, cli = loopbackConfig(t, server, client, verbs.RC, func(c *Config) { c.MTU = wantMTU })
			} else {
				srv, cli = loopback(t, server, client, verbs.RC)
			}
			assert.Equal(t, wantMTU, cli.PathMTU())
			assert.Equal(t, wantMTU, srv.PathMTU())

			assert.Equal(t, verbs.QPRTS, client.qp.State())
			assert.Equal(t, verbs.QPRTS, server.qp.State())
			assert.Equal(t, server.qp.Num(), cli.Remote().QPN)
			assert.Equal(t, client.qp.Num(), srv.Remote().QPN)
			assert.Equal(t, PeerInfo{Addr: server.mr.Addr(), Size: bufSize, RKey: server.mr.RKey(), QPN: server.qp.Num(), GID: cli.Remote().GID}, cli.Remote())
			assert.Equal(t, server.addr, gidAddr(cli.Remote().GID), "the server's GID is its address")
			assert.Equal(t, client.addr, gidAddr(srv.Remote().GID))
			dev, _ := cli.Device()
			assert.Equal(t, client.ctx.Name(), dev)

			const n = 300
			t.Run("write", func(t *testing.T) {
				sb, db := client.mr.Bytes(), server.mr.Bytes()
				pattern(sb[:n], 3)
				clear(db)
				r := cli.Remote()
				require.NoError(t, client.qp.PostSend(&verbs.SendWR{ID: 1, Op: verbs.OpWrite, Local: client.mr.SGE(0, n),
					RemoteAddr: r.Addr + 64, RKey: r.RKey, Flags: verbs.FlagSignaled}))
				pollOne(t, client.cq)
				assert.Equal(t, sb[:n], db[64:64+n])
				assert.Equal(t, make([]byte, 64), db[:64], "nothing before the target")
			})
			t.Run("send", func(t *testing.T) {
				sb, db := server.mr.Bytes(), client.mr.Bytes()
				pattern(sb[:n], 5)
				clear(db)
				require.NoError(t, client.qp.PostRecv(7, client.mr.SGE(0, bufSize)))
				require.NoError(t, server.qp.PostSend(&verbs.SendWR{ID: 2, Op: verbs.OpSend, Local: server.mr.SGE(0, n), Flags: verbs.FlagSignaled}))
				pollOne(t, server.cq)
				wc := pollOne(t, client.cq)
				assert.Equal(t, uint64(7), wc.WRID)
				assert.Equal(t, verbs.WCRecv, wc.Opcode)
				assert.Equal(t, uint32(n), wc.ByteLen)
				assert.Equal(t, sb[:n], db[:n])
			})
		})
	}
}

// TestUD resolves UD QPs through rdma_cm (SIDR) and sends both ways with
// the address handles each side got.
func TestUD(t *testing.T) {
	for _, p := range pairings {
		t.Run(p.name, func(t *testing.T) {
			checkLeaks(t)
			server, client := sides(t, p.cross, verbs.UD)
			// A receive posted in INIT before connecting survives the
			// connection (the QP may come in RESET or INIT).
			require.NoError(t, server.qp.ToInit(verbs.InitAttr{Port: 1, QKey: 0x42}))
			early := server.mr.SGE(bufSize/2, bufSize/2)
			require.NoError(t, server.qp.PostRecv(1, early))
			var srv, cli *Conn
			if p.cross {
				// The Q_Key perftest and rdmalat's loops use, set on both.
				srv, cli = loopbackConfig(t, server, client, verbs.UD, func(c *Config) { c.QKey = 0x11111111 })
				assert.Equal(t, uint32(0x11111111), cli.Remote().QKey)
				assert.Equal(t, uint32(0x11111111), srv.Remote().QKey)
			} else {
				srv, cli = loopback(t, server, client, verbs.UD)
				assert.Equal(t, uint32(udpQKey), cli.Remote().QKey)
			}
			require.NotNil(t, cli.AH())
			require.NotNil(t, srv.AH())
			assert.Equal(t, server.qp.Num(), cli.Remote().QPN)
			assert.Equal(t, client.qp.Num(), srv.Remote().QPN)

			const n, grh = 200, 40
			send := func(t *testing.T, from, to *side, c *Conn, seed byte) {
				sb, db := from.mr.Bytes(), to.mr.Bytes()
				pattern(sb[:n], seed)
				clear(db)
				require.NoError(t, to.qp.PostRecv(9, to.mr.SGE(0, n+grh)))
				r := c.Remote()
				require.NoError(t, from.qp.PostSend(&verbs.SendWR{ID: 3, Op: verbs.OpSend, Local: from.mr.SGE(0, n), Flags: verbs.FlagSignaled,
					AH: c.AH(), RemoteQPN: r.QPN, RemoteQKey: r.QKey}))
				pollOne(t, from.cq)
				wc := pollOne(t, to.cq)
				assert.Equal(t, uint32(n+grh), wc.ByteLen)
				assert.Equal(t, from.qp.Num(), wc.SrcQP, "the message comes from the peer's QP")
				assert.Equal(t, sb[:n], db[grh:grh+n])
			}
			t.Run("early-receive", func(t *testing.T) {
				sb := client.mr.Bytes()
				pattern(sb[:n], 17)
				r := cli.Remote()
				require.NoError(t, client.qp.PostSend(&verbs.SendWR{ID: 4, Op: verbs.OpSend, Local: client.mr.SGE(0, n), Flags: verbs.FlagSignaled,
					AH: cli.AH(), RemoteQPN: r.QPN, RemoteQKey: r.QKey}))
				pollOne(t, client.cq)
				wc := pollOne(t, server.cq)
				assert.Equal(t, uint64(1), wc.WRID)
				assert.Equal(t, sb[:n], server.mr.Bytes()[bufSize/2+grh:bufSize/2+grh+n], "the Q_Key is the connection's, set by INIT->INIT")
			})
			t.Run("client-to-server", func(t *testing.T) { send(t, client, server, cli, 11) })
			t.Run("server-to-client", func(t *testing.T) { send(t, server, client, srv, 13) })
		})
	}
}

// slack is how late a deadline may be noticed in the tests: generous,
// because an emulated guest on a loaded host stalls for seconds and its
// clock jumps. A hang still fails (and -timeout stops it).
const slack = 10 * time.Second

// TestDialNobodyListens: a port without a listener is refused at once, not
// after the deadline.
func TestDialNobodyListens(t *testing.T) {
	checkLeaks(t)
	server, client := sides(t, true, verbs.RC)
	l := listen(t, server.addr, verbs.RC) // a free port, then free it again
	dst := l.Addr()
	require.NoError(t, l.Close())
	start := time.Now()
	_, err := Dial(timeout(t, 30*time.Second), client.addr, dst, client.config())
	t.Logf("%v after %v", err, time.Since(start))
	require.Error(t, err)
	// ECONNREFUSED, not a deadline error: the REJ came, nothing waited.
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.Equal(t, verbs.QPReset, client.qp.State(), "the QP is left as it was")
}

// TestDialNeverAccepted: a listener that never accepts costs the client
// its deadline and no more.
func TestDialNeverAccepted(t *testing.T) {
	checkLeaks(t)
	server, client := sides(t, true, verbs.RC)
	l := listen(t, server.addr, verbs.RC)
	const d = 1500 * time.Millisecond
	start := time.Now()
	_, err := Dial(timeout(t, d), client.addr, l.Addr(), client.config())
	took := time.Since(start)
	t.Logf("%v after %v", err, took)
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.GreaterOrEqual(t, took, d-50*time.Millisecond)
	assert.Less(t, took, d+slack)
	_ = server
}

// TestDialUnreachable: an address on the device's subnet where no host
// answers fails within the deadline.
func TestDialUnreachable(t *testing.T) {
	checkLeaks(t)
	_, client := sides(t, false, verbs.RC)
	if !client.addr.Is4() {
		t.Skipf("skipping: %v is not IPv4, no spare address to pick", client.addr)
	}
	b := client.addr.As4()
	b[3] = 99
	dst := netip.AddrPortFrom(netip.AddrFrom4(b), 7471)
	start := time.Now()
	_, err := Dial(timeout(t, 4*time.Second), client.addr, dst, client.config())
	t.Logf("%v after %v", err, time.Since(start))
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.ErrorContains(t, err, "does "+dst.Addr().String()+" answer ARP")
	assert.Less(t, time.Since(start), 4*time.Second+slack)
}

// TestAcceptDeadline: Accept with nobody dialling returns at the deadline;
// Close ends an Accept in progress.
func TestAcceptDeadline(t *testing.T) {
	checkLeaks(t)
	server, _ := sides(t, false, verbs.RC)
	l := listen(t, server.addr, verbs.RC)
	start := time.Now()
	_, err := l.Accept(timeout(t, 300*time.Millisecond), server.config())
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.Less(t, time.Since(start), 300*time.Millisecond+slack)

	done := make(chan error, 1)
	go func() {
		_, err := l.Accept(timeout(t, 60*time.Second), server.config())
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	start = time.Now()
	require.NoError(t, l.Close())
	assert.ErrorIs(t, <-done, os.ErrClosed)
	assert.Less(t, time.Since(start), slack)
}

// TestWrongDevice: an address on another device than the QP's is refused
// with a message naming both.
func TestWrongDevice(t *testing.T) {
	checkLeaks(t)
	server, client := sides(t, true, verbs.RC)
	l := listen(t, server.addr, verbs.RC)
	// The client's QP is on the second device, the source address on the first.
	_, err := Dial(timeout(t, 5*time.Second), server.addr, l.Addr(), client.config())
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EXDEV)
	assert.ErrorContains(t, err, client.ctx.Name())
	assert.ErrorContains(t, err, server.ctx.Name())

	// The server's QP is on the second device: the request is rejected with
	// the reason, and the listener serves the next one.
	other := newSide(t, client.ctx, verbs.RC)
	_, _, err = Loopback(timeout(t, connectTimeout), l, client.addr, other.config(), client.config())
	require.Error(t, err)
	t.Log(err)
	assert.ErrorIs(t, err, syscall.EXDEV, "the server's error")
	assert.ErrorIs(t, err, syscall.ECONNREFUSED, "the client's error")
	assert.ErrorContains(t, err, "refused by the peer: "+server.addr.String()+" is on "+server.ctx.Name())
	srv, cli, err := Loopback(timeout(t, connectTimeout), l, client.addr, server.config(), client.config())
	require.NoError(t, err)
	require.NoError(t, cli.Close())
	require.NoError(t, srv.Close())
}

// TestUnsupported: UC, and a listener for another transport, say so.
func TestUnsupported(t *testing.T) {
	checkLeaks(t)
	server, _ := sides(t, false, verbs.RC)
	_, err := Listen(netip.AddrPortFrom(server.addr, 0), verbs.UC)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	uc, err := server.pd.CreateQP(verbs.QPConfig{Type: verbs.UC, SendCQ: server.cq})
	require.NoError(t, err)
	defer func() { require.NoError(t, uc.Close()) }()
	_, err = Dial(timeout(t, time.Second), netip.Addr{}, netip.AddrPortFrom(server.addr, 1), Config{QP: uc})
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.ErrorContains(t, err, "perftest -R refuses UC")
	l := listen(t, server.addr, verbs.UD)
	_, err = l.Accept(timeout(t, time.Second), server.config())
	assert.ErrorIs(t, err, syscall.EINVAL)
}

// TestForeignClient: a connection request from something other than
// rdmabench (rping of rdmacm-utils) is refused with a reason, and the
// listener then serves an rdmabench client.
func TestForeignClient(t *testing.T) {
	checkLeaks(t)
	server, client := sides(t, true, verbs.RC)
	rping, err := exec.LookPath("rping")
	if err != nil {
		if os.Getenv("RDMABENCH_VM") == "1" {
			t.Fatalf("rping (rdmacm-utils) is part of the VM but not found: %v", err)
		}
		t.Skipf("skipping: no rping (apt-get install rdmacm-utils): %v", err)
	}
	l := listen(t, server.addr, verbs.RC)
	ctx := timeout(t, connectTimeout)
	cmd := exec.CommandContext(ctx, rping, "-c", "-a", l.Addr().Addr().String(), "-p", fmt.Sprint(l.Addr().Port()), "-C", "1", "-v")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	// The foreign request is refused and the wait goes on (a stray cannot
	// end a real session's accept): end it once rping has given up.
	actx, cancel := context.WithCancel(ctx)
	accepted := make(chan error, 1)
	go func() {
		_, err := l.Accept(actx, server.config())
		accepted <- err
	}()
	rpingErr := cmd.Wait()
	cancel()
	err = <-accepted
	t.Logf("Accept: %v; rping: %v: %s", err, rpingErr, bytes.TrimSpace(out.Bytes()))
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EPROTO)
	assert.ErrorIs(t, err, context.Canceled, "the wait went on until cancelled")
	assert.ErrorContains(t, err, "refused 1 connection requests meanwhile")
	assert.Error(t, rpingErr, "rping was refused")

	srv, cli, err := Loopback(timeout(t, connectTimeout), l, client.addr, server.config(), client.config())
	require.NoError(t, err)
	require.NoError(t, cli.Close())
	require.NoError(t, srv.Close())
}

// TestCleanup: a Listener dropped without Close is destroyed by the
// runtime cleanup, the safety net (not a way to release things).
func TestCleanup(t *testing.T) {
	checkLeaks(t)
	server, _ := sides(t, false, verbs.RC)
	before := OpenObjects()
	func() {
		l, err := Listen(netip.AddrPortFrom(server.addr, 0), verbs.RC)
		require.NoError(t, err)
		assert.Equal(t, before["cm_id"]+1, OpenObjects()["cm_id"])
		_ = l
	}()
	deadline := time.Now().Add(pollTimeout)
	for OpenObjects()["cm_id"] != before["cm_id"] || OpenObjects()["event_channel"] != before["event_channel"] {
		if time.Now().After(deadline) {
			t.Fatalf("the dropped listener's id and channel were not destroyed: %v", OpenObjects())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
