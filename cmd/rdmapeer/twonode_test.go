package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/peer"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
	"github.com/rdmabench/rdmabench/verbs"
)

// The two-node tests proper; peerproc_test.go runs the rdmapeer process
// and the client they drive.

// device, and the session logged in one line when it ends.
func TestTwoNodeRuns(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev)
	p := dialPeer(t, pp.addr, dev, 64<<10, 5*time.Second)
	assert.Equal(t, "two-node", p.Mode)
	assert.Equal(t, peerDev, p.PeerDevice.Name)
	assert.Equal(t, env.CPU{}, p.CPUs[1])
	sizes := []int{2, 64, 4096, 64 << 10}
	var total uint64
	for _, size := range sizes {
		s, ran := runRoundTrips(t, p, size, 20, 300)
		total += ran
		assert.Equal(t, int64(300), s.Count)
		p50, _ := s.Percentile(500000)
		t.Logf("size %d: one-way min %.1f us, p50 %.1f us, max %.1f us", size, s.Min/1e3, p50/1e3, s.Max/1e3)
	}
	c := testenv.MustLoad(t)
	cfg := strings.Join(testenv.ConfigLines(p, c), "\n")
	assert.Contains(t, cfg, "rdmabench-mode: two-node\n")
	assert.Contains(t, cfg, "rdma-device: "+dev+"\n")
	assert.Contains(t, cfg, "rdma-peer-device: "+peerDev+"\n")
	assert.Contains(t, cfg, "rdma-peer-fw: ")
	lastCPU, err := parseCPUs("")
	require.NoError(t, err)
	assert.Equal(t, env.PinTo(lastCPU[0]), p.PeerCPU, "rdmapeer's default: the last CPU it may use")
	assert.Contains(t, cfg, fmt.Sprintf("rdma-peer-cpu: %d\n", lastCPU[0]))
	t.Logf("config lines:\n%s", cfg)

	require.NoError(t, p.Close())
	line := pp.log.wait(t, 10*time.Second, "session ", "result=")
	assert.Contains(t, line, fmt.Sprintf("device=%s op=write max-size=65536 sizes=2,64,4096,65536 runs=4 round-trips=%d ", peerDev, total))
	assert.Contains(t, line, "result=ok")
}

// TestTwoNodePeerKilled: rdmapeer SIGKILLed in the middle of a long run
// ends the client's run at once with an error saying so.
func TestTwoNodePeerKilled(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev)
	p := dialPeer(t, pp.addr, dev, 64, 5*time.Second)
	r, err := p.Start(2, 100)
	require.NoError(t, err)
	defer r.Close()
	for range 2000 {
		_, err := r.Next()
		require.NoError(t, err)
	}
	start := time.Now()
	require.NoError(t, pp.cmd.Process.Kill())
	for err == nil {
		_, err = r.Next()
	}
	elapsed := time.Since(start)
	require.Error(t, err)
	assert.ErrorIs(t, err, oob.ErrPeerLost)
	assert.Contains(t, err.Error(), "closed the connection during the run (its process exited or was killed)")
	assert.Less(t, elapsed, 2*time.Second)
	t.Logf("the client failed %v after SIGKILL: %v", elapsed, err)
	assert.Error(t, r.Close())
	_, err = p.Start(2, 0)
	assert.ErrorContains(t, err, "has ended")
	_ = pp.cmd.Wait()
}

// TestTwoNodePeerStalled: rdmapeer stopped (SIGSTOP) in the middle of a run
// is caught by the loop's idle timeout, and the client fails within it.
func TestTwoNodePeerStalled(t *testing.T) {
	const timeout = time.Second
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev)
	p := dialPeer(t, pp.addr, dev, 64, timeout)
	r, err := p.Start(2, 100)
	require.NoError(t, err)
	for range 500 {
		_, err := r.Next()
		require.NoError(t, err)
	}
	start := time.Now()
	require.NoError(t, pp.cmd.Process.Signal(syscall.SIGSTOP))
	defer pp.cmd.Process.Signal(syscall.SIGCONT)
	for err == nil {
		_, err = r.Next()
	}
	elapsed := time.Since(start)
	assert.ErrorIs(t, err, rdmalat.ErrTimeout)
	assert.Contains(t, err.Error(), env.VarTimeout)
	closeStart := time.Now()
	r.Close()
	closed := time.Since(closeStart)
	assert.Less(t, elapsed, timeout+3*time.Second)
	assert.Less(t, closed, time.Second, "Close after a failed run does not wait on the stalled peer")
	t.Logf("the client failed %v after SIGSTOP (timeout %v), closed in %v: %v", elapsed, timeout, closed, err)

	// Once it runs again, the peer sees the session gone and frees it.
	require.NoError(t, pp.cmd.Process.Signal(syscall.SIGCONT))
	pp.log.wait(t, 10*time.Second, "session ", "result=error")
}

// TestTwoNodeClientKilled: a client process SIGKILLed in the middle of a
// run: rdmapeer logs it, frees the session and serves the next client.
func TestTwoNodeClientKilled(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev, "-max-sessions", "1")
	exe, err := os.Executable()
	require.NoError(t, err)
	client := exec.Command(exe)
	client.Env = append(os.Environ(), roleEnv+"=client", "RDMAPEER_TEST_ADDR="+pp.addr, env.VarDevice+"="+dev)
	client.Stderr = os.Stderr
	out, err := client.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, client.Start())
	defer client.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "running\n", line)
	time.Sleep(200 * time.Millisecond)

	start := time.Now()
	require.NoError(t, client.Process.Kill())
	logged := pp.log.wait(t, 10*time.Second, "session ", "result=error")
	elapsed := time.Since(start)
	assert.Contains(t, logged, "closed the connection during the run (its process exited or was killed)")
	assert.Contains(t, logged, "runs=1 ")
	assert.Less(t, elapsed, 3*time.Second)
	t.Logf("rdmapeer logged the killed client after %v: %s", elapsed, logged)
	_ = client.Wait()

	// The one session slot is free again.
	p := dialPeer(t, pp.addr, dev, 64, 5*time.Second)
	_, _ = runRoundTrips(t, p, 64, 10, 200)
}

// TestPeerManySessions: 200 sessions one after another, then rounds of
// four at once, each with a run: afterwards the process holds no more
// verbs objects (QPs, MRs, ...), file descriptors or registered memory
// than before. The peer runs in this process (package peer, as rdmapeer
// does), so the counts cover both sides.
func TestPeerManySessions(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	// Room for the four at once, and for the sessions whose clients have
	// closed but that the server has not yet seen end.
	srv := peer.New(peer.Config{
		Session:     peer.ServeConfig{Device: peerDev, GIDIndex: -1},
		MaxSessions: 8, MaxPerClient: 8, MaxMemory: 8 * 2 * 4096, Logf: func(string, ...any) {},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(ln)
	defer srv.Shutdown()
	addr := ln.Addr().String()

	session := func() error {
		p, err := rdmalat.DialPeer(t.Context(), addr, rdmalat.RemoteConfig{
			Endpoint: rdmalat.EndpointConfig{Device: dev, GIDIndex: -1, MaxSize: 4096, Inline: -1},
			Timeout:  10 * time.Second,
		})
		if err != nil {
			return err
		}
		defer p.Close()
		r, err := p.Start(64, 5)
		if err != nil {
			return err
		}
		for range 20 {
			if _, err := r.Next(); err != nil {
				r.Close()
				return err
			}
		}
		if err := r.Close(); err != nil {
			return err
		}
		return p.Close()
	}
	// settle waits for n sessions to have ended: reported, which is after
	// their objects are closed (a session's slot, and Active, are given
	// back earlier, before its last reply).
	settle := func(n int) {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if st := srv.Stats(); st.Active == 0 && st.Sessions >= n {
				return
			}
		}
	}

	require.NoError(t, session()) // warm: whatever is opened once per process
	settle(1)
	objects, fds := verbs.OpenObjects(), openFDs(t)
	start := time.Now()
	for i := range 200 {
		require.NoError(t, session(), "session %d", i)
	}
	sequential := time.Since(start)
	start = time.Now()
	for round := range 5 {
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = session() })
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...), "round %d", round)
		settle(201 + 4*(round+1))
	}
	concurrent := time.Since(start)
	settle(221)
	st := srv.Stats()
	assert.Zero(t, st.Active)
	assert.Zero(t, st.Memory, "registered memory given back")
	assert.Equal(t, 221, st.Sessions)
	assert.Zero(t, st.Failed)
	assert.Equal(t, objects, verbs.OpenObjects(), "open verbs objects")
	assert.Equal(t, fds, openFDs(t), "open file descriptors")
	t.Logf("200 sessions in %v (%v each), 5 rounds of 4 at once in %v; open objects %v, %d fds",
		sequential, sequential/200, concurrent, verbs.OpenObjects(), openFDs(t))
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents)
}

// TestTwoNodeVsLoopback measures the same round trips three ways in one
// boot, interleaved: loopback on one device, loopback across the two
// devices (in one process), and two-node (rdmapeer in its own process on
// the second device). It logs each one's p50 and p99 one-way latency; it
// checks only that all three run.
func TestTwoNodeVsLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the latency comparison in -short mode")
	}
	dev, peerDev := twoNodeDevices(t)
	cpus, err := rdmalat.DefaultCPUs()
	require.NoError(t, err)
	pp := startPeer(t, peerDev, "-cpu", fmt.Sprint(cpus[1]))
	mk := func(peerDevice string) *rdmalat.Pair {
		p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
			Endpoint:   rdmalat.EndpointConfig{Device: dev, GIDIndex: -1, MaxSize: 4096, Inline: -1},
			PeerDevice: peerDevice, CPUs: cpus, Timeout: 5 * time.Second,
		})
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		return p
	}
	pairs := []struct {
		name string
		p    *rdmalat.Pair
	}{
		{"loopback " + dev, mk("")},
		{"loopback " + dev + "->" + peerDev, mk(peerDev)},
		{"two-node " + dev + "->rdmapeer " + peerDev, dialPeer(t, pp.addr, dev, 4096, 5*time.Second)},
	}
	const rounds, n = 3, 2000
	for _, size := range []int{2, 4096} {
		p50 := make([][]float64, len(pairs))
		p99 := make([][]float64, len(pairs))
		for range rounds {
			for i, pr := range pairs {
				s, _ := runRoundTrips(t, pr.p, size, 500, n)
				v50, _ := s.Percentile(500000)
				v99, _ := s.Percentile(990000)
				p50[i] = append(p50[i], v50/1e3)
				p99[i] = append(p99[i], v99/1e3)
			}
		}
		for i, pr := range pairs {
			t.Logf("size %5d %-40s one-way p50 %v us, p99 %v us", size, pr.name, fmtList(p50[i]), fmtList(p99[i]))
		}
	}
}

func fmtList(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(s, " ")
}
