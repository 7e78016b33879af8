package rdmalat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
)

// peerDial is how DialPeer reached a two-node pair's rdmapeer: a load
// stream dials it again for a session of its own.
type peerDial struct {
	addr string
	cfg  RemoteConfig
}

// loadPeer is a load stream's session with rdmapeer (oob.FlagLoad): the
// peer holds the queue pair and buffer the stream writes into, and
// answers nothing while it runs.
type loadPeer struct {
	conn *oob.Conn
	addr string
	seq  uint32
}

// dialLoadPeer opens a load session with d's rdmapeer on the same device
// as the pair's session, and connects src, the stream's source, to the
// target the peer sets up. It returns the session and the target.
func dialLoadPeer(d *peerDial, src *Endpoint) (*loadPeer, PeerInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*d.cfg.Timeout)
	defer cancel()
	conn, err := oob.DialToken(ctx, d.addr, d.cfg.Timeout, d.cfg.Token)
	if err != nil {
		return nil, PeerInfo{}, loadSessionErr(d.addr, err)
	}
	l := &loadPeer{conn: conn, addr: d.addr}
	fail := func(err error) (*loadPeer, PeerInfo, error) {
		conn.Close()
		return nil, PeerInfo{}, loadSessionErr(d.addr, err)
	}
	c := src.cfg
	flags := oob.FlagLoad | wireFlags(c)&(oob.FlagHugePages|oob.FlagTHP|oob.FlagODP)
	if err := conn.SendParams(oob.Params{
		Op: spec.Write, Transport: spec.RC, Size: uint32(c.MaxSize), MTU: uint32(max(c.MTU, 0)),
		GIDIndex: -1, IdleTimeout: d.cfg.Timeout, Flags: flags, QoS: c.QoS, Device: d.cfg.PeerDevice,
	}); err != nil {
		return fail(err)
	}
	pe, err := conn.RecvEndpoint()
	switch {
	case err != nil && errors.Is(err, oob.ErrInvalidParams) && strings.Contains(err.Error(), "unknown bits"):
		return fail(fmt.Errorf("%w (an rdmapeer built before it served load streams refuses them as an unknown flag bit: run this rdmabench's rdmapeer, or unset %s)", err, env.VarLoad))
	case err != nil && errors.Is(err, oob.ErrBusy):
		return fail(fmt.Errorf("%w (the load stream takes a second session on rdmapeer beside the measuring one: it needs two of rdmapeer -max-sessions and -max-per-client)", err))
	case err != nil:
		return fail(err)
	}
	remote := peerInfoOf(pe)
	if err := src.Connect(remote); err != nil {
		_ = conn.SendError(oob.CodeResource, "the client could not connect its load stream's queue pair: "+err.Error()) // best effort: we close anyway
		return fail(err)
	}
	if err := conn.SendEndpoint(wireOf(src)); err != nil {
		return fail(err)
	}
	if err := conn.RecvBarrier(0); err != nil {
		return fail(err)
	}
	return l, remote, nil
}

// renew tells the peer that the stream goes on for another measured run:
// rdmapeer waits at most its -idle for a load session's next request.
func (l *loadPeer) renew(size int) error {
	l.seq++
	if err := l.conn.SendRun(l.seq, uint32(size)); err != nil {
		return loadSessionErr(l.addr, err)
	}
	if err := l.conn.RecvBarrier(l.seq); err != nil {
		return loadSessionErr(l.addr, err)
	}
	return nil
}

// close tells the peer how many bytes the stream wrote, once it has
// stopped, and ends the session: the peer frees its side.
func (l *loadPeer) close(written uint64) error {
	err := l.conn.SendDone(written)
	if err == nil {
		_, err = l.conn.RecvDone()
	}
	if err != nil {
		err = loadSessionErr(l.addr, err)
	}
	return errors.Join(err, l.conn.Close())
}

// loadSessionErr names the load stream's session in err, and the peer
// where err does not (oob's errors name the other side).
func loadSessionErr(addr string, err error) error {
	if strings.Contains(err.Error(), addr) {
		return fromPeer(fmt.Errorf("%s: load stream's session: %w", env.VarLoad, err))
	}
	return fromPeer(fmt.Errorf("%s: load stream's session with rdmapeer at %s: %w", env.VarLoad, addr, err))
}
