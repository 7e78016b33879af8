package oob_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
)

// TestWatchEndedOnMessage: a message that is not an Error ends a Watch
// without a failure, closes Ended, and is returned by the next receive.
func TestWatchEndedOnMessage(t *testing.T) {
	client, server := pair(t, time.Second)
	w := server.Watch(func(err error) { t.Errorf("onFail called: %v", err) })
	select {
	case <-w.Ended():
		t.Fatal("Ended before any message")
	case <-time.After(20 * time.Millisecond):
	}
	require.NoError(t, client.SendDone(42))
	select {
	case <-w.Ended():
	case <-time.After(2 * time.Second):
		t.Fatal("Ended not closed by the client's Done")
	}
	require.NoError(t, w.Err())
	require.NoError(t, w.Stop())
	n, err := server.RecvDone()
	require.NoError(t, err)
	assert.Equal(t, uint64(42), n)
}

func TestWatchPeerClosed(t *testing.T) {
	client, server := pair(t, time.Second)
	called := make(chan error, 1)
	w := client.Watch(func(err error) { called <- err })
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, w.Err())
	start := time.Now()
	require.NoError(t, server.Close())
	select {
	case <-w.Failed():
	case <-time.After(2 * time.Second):
		t.Fatal("Watch did not report the closed peer within 2 s")
	}
	elapsed := time.Since(start)
	assert.Less(t, elapsed, 100*time.Millisecond)
	err := w.Err()
	require.ErrorIs(t, err, oob.ErrPeerLost)
	require.ErrorIs(t, err, io.EOF)
	assert.EqualError(t, err, fmt.Sprintf("oob: lost the peer: peer %s closed the connection during the run (its process exited or was killed): EOF", client.NetConn().RemoteAddr()))
	assert.Equal(t, err, <-called)
	assert.Equal(t, err, w.Stop())
	t.Logf("reported after %v", elapsed)
}

// TestWatchKilledPeer SIGKILLs a peer process during a Watch.
func TestWatchKilledPeer(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	addr, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)

	c, err := oob.Dial(t.Context(), strings.TrimSpace(addr), 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Barrier(1))
	w := c.Watch(nil)
	time.Sleep(10 * time.Millisecond)
	start := time.Now()
	require.NoError(t, cmd.Process.Kill())
	select {
	case <-w.Failed():
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not report the killed peer within 5 s")
	}
	elapsed := time.Since(start)
	// At once, not after a timeout: the kernel closes the dead process's
	// socket and the Watch reads EOF (a few ms on a quiet host; the bound
	// is loose because a loaded CI host delays the kill itself).
	assert.Less(t, elapsed, 2*time.Second, "well under the 5 s exchange timeout")
	require.ErrorIs(t, w.Stop(), oob.ErrPeerLost)
	var exit *exec.ExitError
	require.ErrorAs(t, cmd.Wait(), &exit)
	t.Logf("killed peer reported after %v: %v", elapsed, w.Err())
}

func TestWatchPeerError(t *testing.T) {
	client, server := pair(t, time.Second)
	w := client.Watch(nil)
	require.NoError(t, server.SendError(oob.CodeTimeout, "rdma loop stalled for 10s"))
	select {
	case <-w.Failed():
	case <-time.After(2 * time.Second):
		t.Fatal("Watch did not report the peer's Error")
	}
	err := w.Stop()
	var perr *oob.Error
	require.ErrorAs(t, err, &perr)
	assert.EqualError(t, err, "peer: rdma loop stalled for 10s")
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
}

// TestWatchStopMidFrame: Stop interrupts a frame half read; the next
// receive finishes it.
func TestWatchStopMidFrame(t *testing.T) {
	client, server := pair(t, time.Second)
	frame, err := oob.Marshal(oob.Barrier{Seq: 5})
	require.NoError(t, err)
	w := client.Watch(nil)
	_, err = server.NetConn().Write(frame[:3])
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)

	_, err = client.Recv()
	require.ErrorIs(t, err, oob.ErrProtocol, "receive during a Watch")

	require.NoError(t, w.Stop())
	require.NoError(t, w.Stop(), "Stop is idempotent")
	_, err = server.NetConn().Write(frame[3:])
	require.NoError(t, err)
	m, err := client.Recv()
	require.NoError(t, err)
	assert.Equal(t, oob.Barrier{Seq: 5}, m)

	// A second watch on the same Conn, stopped with nothing read.
	w = client.Watch(nil)
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, w.Stop())
	require.NoError(t, server.SendDone(3))
	n, err := client.RecvDone()
	require.NoError(t, err)
	assert.Equal(t, uint64(3), n)
}

func TestWatchClose(t *testing.T) {
	client, _ := pair(t, time.Second)
	called := false
	w := client.Watch(func(error) { called = true })
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, client.Close())
	require.NoError(t, w.Stop(), "closing our own side is not a failure")
	assert.False(t, called)
}
