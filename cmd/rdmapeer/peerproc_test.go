package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/loops"
	"github.com/rdmabench/rdmabench/latency"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// The two-node tests run rdmapeer for real: this test binary re-executes
// itself (like os/exec's tests) as the peer process, on the second device
// (rxe1 in the soft-RoCE VM), and the client in this process on the first
// (rxe0), so that the round trips cross the VM's veth pair. Run them in
// the VM:
//
//	go build -o bin/rxevm ./cmd/rxevm
//	go test -exec $PWD/bin/rxevm -run 'TwoNode|Peer' -v ./cmd/rdmapeer
//
// Elsewhere they skip unless a device is present or promised.

// roleEnv makes the test binary a helper process: "peer" runs rdmapeer
// with the binary's arguments; "client" runs helperClient.
const roleEnv = "RDMAPEER_TEST_ROLE"

// recvLenEnv, in a peer helper's environment, shortens every receive it
// posts to that many bytes (loops.ShortRecvForTest).
const recvLenEnv = "RDMAPEER_TEST_RECV_LEN"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "peer":
		if n, err := strconv.Atoi(os.Getenv(recvLenEnv)); err == nil {
			loops.ShortRecvForTest = n
		}
		os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
	case "client":
		os.Exit(helperClient(os.Getenv("RDMAPEER_TEST_ADDR")))
	}
	goleak.VerifyTestMain(m) // fails the run when a test leaves a goroutine behind
}

// helperClient is a client process for a test to kill: it opens a
// session, starts a long run, says "running" and runs until killed.
func helperClient(addr string) int {
	c, err := env.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	p, err := rdmalat.DialPeer(context.Background(), addr, rdmalat.RemoteConfig{
		Endpoint: rdmalat.EndpointConfig{Device: c.Device, GIDIndex: -1, MaxSize: 64, Inline: -1},
		Timeout:  5 * time.Second,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	r, err := p.Start(2, 100)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("running")
	for {
		if _, err := r.Next(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
}

// lines collects a process's output lines for tests to wait on.
type lines struct {
	mu    sync.Mutex
	all   []string
	added chan struct{}
}

func newLines(r io.Reader) *lines {
	l := &lines{added: make(chan struct{}, 1)}
	go func() {
		s := bufio.NewScanner(r)
		for s.Scan() {
			l.mu.Lock()
			l.all = append(l.all, s.Text())
			l.mu.Unlock()
			select {
			case l.added <- struct{}{}:
			default:
			}
		}
	}()
	return l
}

// wait returns the first line that contains every one of subs, waiting up
// to d; it fails the test if none comes.
func (l *lines) wait(t *testing.T, d time.Duration, subs ...string) string {
	t.Helper()
	deadline := time.After(d)
	for {
		l.mu.Lock()
		for _, line := range l.all {
			if !slices.ContainsFunc(subs, func(s string) bool { return !strings.Contains(line, s) }) {
				l.mu.Unlock()
				return line
			}
		}
		l.mu.Unlock()
		select {
		case <-l.added:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no line with %q within %v; output:\n%s", subs, d, l.String())
		}
	}
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

// peerProc is an rdmapeer process.
type peerProc struct {
	cmd  *exec.Cmd
	addr string
	log  *lines
}

// twoNodeDevices returns the client's device and the peer's (rxe0 and rxe1
// in the VM), skipping or failing by testenv's rules when there are none.
func twoNodeDevices(t *testing.T) (client, peerDev string) {
	t.Helper()
	c := testenv.MustHaveRDMA(t)
	return c.Device, testenv.MustHaveSecondDevice(t, c)
}

// startPeer starts rdmapeer on device with extra flags, listening on
// 127.0.0.1, and stops it with SIGTERM at the end of the test.
func startPeer(t *testing.T, device string, flags ...string) *peerProc {
	t.Helper()
	return startPeerEnv(t, device, nil, flags...)
}

// startPeerEnv is startPeer with extra environment variables.
func startPeerEnv(t *testing.T, device string, extra []string, flags ...string) *peerProc {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	args := append([]string{"-listen", "127.0.0.1:0"}, flags...)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), roleEnv+"=peer", env.VarDevice+"="+device), extra...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &peerProc{cmd: cmd, log: newLines(stderr)}
	t.Cleanup(func() {
		if cmd.ProcessState == nil { // not killed and waited for by the test
			_ = cmd.Process.Signal(syscall.SIGTERM)
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				assert.NoError(t, err, "rdmapeer's exit after SIGTERM")
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Error("rdmapeer did not exit within 10 s of SIGTERM")
			}
		}
		t.Logf("rdmapeer's log:\n%s", p.log)
	})
	// The first stdout line is "rdmapeer listening on ADDR".
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	if err != nil {
		cmd.Wait()
		t.Fatalf("rdmapeer did not start: %v; its log:\n%s", err, p.log)
	}
	go io.Copy(io.Discard, out)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "rdmapeer listening on ")
	require.True(t, ok, "first line %q", line)
	p.addr = addr
	return p
}

func dialPeer(t *testing.T, addr, device string, maxSize int, timeout time.Duration) *rdmalat.Pair {
	t.Helper()
	cpus, err := rdmalat.DefaultCPUs()
	require.NoError(t, err)
	p, err := rdmalat.DialPeer(t.Context(), addr, rdmalat.RemoteConfig{
		Endpoint: rdmalat.EndpointConfig{Device: device, GIDIndex: -1, MaxSize: maxSize, Inline: -1},
		CPU:      cpus[0], Timeout: timeout,
	})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// runRoundTrips runs warmup+n round trips of size on p and returns their
// one-way summary and the round trips run in all (Next runs them in
// chunks); Close checks that the peer answered every one.
func runRoundTrips(t *testing.T, p *rdmalat.Pair, size, warmup, n int) (latency.Summary, uint64) {
	t.Helper()
	r, err := p.Start(size, warmup)
	require.NoError(t, err)
	defer r.Close()
	rec := latency.NewRecorder(true)
	for range n {
		rtt, err := r.Next()
		require.NoError(t, err)
		rec.Record(rtt)
	}
	ran := r.RoundTrips()
	require.NoError(t, r.Close(), "the peer answers every round trip")
	return rec.Summary(), ran
}

// TestTwoNodeRuns: several sizes on one session, every round trip
// answered by the rdmapeer process, the configuration lines naming its
