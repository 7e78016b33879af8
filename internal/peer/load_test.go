package peer

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
)

var loadParams = oob.Params{Op: spec.Write, Transport: spec.RC, Size: 4096, GIDIndex: -1, Flags: oob.FlagLoad}

// TestLoadSessionTakesNoCPU: a connection whose first Params ask for a
// load stream's target is admitted with no answering CPU, so it opens
// beside the latency session that holds rdmapeer's only CPU; it still
// takes a slot and counts for its client, and a second latency session is
// refused as before.
func TestLoadSessionTakesNoCPU(t *testing.T) {
	srv, addr, _ := startFake(t, Config{MaxSessions: 4, MaxPerClient: 2, CPUs: []int{5}})
	a, err := dialFrom(t, addr, "127.0.0.1", "")
	require.NoError(t, err)
	ea, err := open(t, a)
	require.NoError(t, err)
	assert.Equal(t, int32(5), ea.CPU)

	l, err := dialFrom(t, addr, "127.0.0.1", "")
	require.NoError(t, err)
	require.NoError(t, l.SendParams(loadParams))
	el, err := l.RecvEndpoint()
	require.NoError(t, err, "the load stream's target needs no CPU")
	assert.Equal(t, int32(-1), el.CPU)
	assert.Equal(t, 2, srv.Stats().Active, "it holds a slot")

	c, err := dialFrom(t, addr, "127.0.0.1", "")
	require.NoError(t, err)
	_, err = open(t, c)
	require.ErrorIs(t, err, oob.ErrBusy)
	assert.Contains(t, err.Error(), "already has 2 sessions", "the load session counts for its client")

	d, err := dialFrom(t, addr, "127.0.0.2", "")
	require.NoError(t, err)
	_, err = open(t, d)
	require.ErrorIs(t, err, oob.ErrBusy)
	assert.Contains(t, err.Error(), "every answering CPU (rdmapeer -cpu 5) serves another session")
}

// TestLoadOnlyConnection: a connection admitted for a load stream (no
// CPU) is refused a latency session before anything touches a device.
func TestLoadOnlyConnection(t *testing.T) {
	sc, cc := net.Pipe()
	server, client := oob.NewConn(sc), oob.NewConn(cc)
	server.Timeout, client.Timeout = 2*time.Second, 2*time.Second
	defer client.Close()
	var reports []SessionReport
	done := make(chan error, 1)
	go func() {
		defer server.Close()
		done <- serve(server, ServeConfig{Device: "nodev0", LoadOnly: true, Report: func(r SessionReport) { reports = append(reports, r) }}, params)
	}()
	_, err := client.Recv()
	require.ErrorIs(t, err, oob.ErrProtocol)
	assert.Contains(t, err.Error(), "this connection opened as a load stream, with no answering CPU: open a connection of its own for a latency session")
	require.ErrorIs(t, <-done, oob.ErrProtocol)
	require.Len(t, reports, 1)
	assert.Error(t, reports[0].Err)
}
