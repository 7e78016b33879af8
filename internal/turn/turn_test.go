package turn

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParse(t *testing.T) {
	for line, want := range map[string]Msg{
		"hello rdmabench-turn/1 42": {Verb: "hello", PID: 42},
		"want":                      {Verb: "want"},
		"go 200":                    {Verb: "go", K: 200},
		"done burst 3 7 200 25000 21000 BenchmarkRDMAWrite/size=2": {Verb: "done", Burst: Burst{Kind: KindBurst, Run: 3, Seq: 7, N: 200, Median: 25000, Min: 21000, Label: "BenchmarkRDMAWrite/size=2"}},
		"done warmup 1 0 1000 0 0 run":                             {Verb: "done", Burst: Burst{Kind: KindWarmup, Run: 1, N: 1000, Label: "run"}},
	} {
		got, err := Parse(line)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", line, got, err, want)
		}
	}
	for _, bad := range []string{"", "hello rdmabench-turn/2 1", "hello rdmabench-turn/1 x", "want now", "go", "go 0", "go -3", "go 1 2",
		"done burst 1 2 3 4 5", "done solo 1 1 1 1 1 x", "done burst 1 -2 3 4 5 x", "done burst 1 2 3 4 5 x y", "stop"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// pair returns a client on one end of a socket pair and a reader and
// writer on the other, as the conductor holds it.
func pair(t *testing.T, timeout time.Duration) (*Client, *bufio.Reader, *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0) // tests start no processes: no close-on-exec needed
	if err != nil {
		t.Fatal(err)
	}
	conductor := os.NewFile(uintptr(fds[1]), "conductor")
	t.Cleanup(func() { conductor.Close() })
	c, err := NewClient(fds[0], timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.f.Close() })
	return c, bufio.NewReader(conductor), conductor
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	s, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(s, "\n")
}

func TestClientConversation(t *testing.T) {
	c, r, w := pair(t, 5*time.Second)
	if got, want := readLine(t, r), "hello "+Version+" "+strconv.Itoa(os.Getpid()); got != want {
		t.Errorf("hello line %q, want %q", got, want)
	}
	// Two grants in one write: the second must be kept for the next Acquire.
	if _, err := w.WriteString("go 100\ngo 7\n"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{100, 7} {
		k, err := c.Acquire()
		if err != nil || k != want {
			t.Fatalf("Acquire = %d, %v; want %d", k, err, want)
		}
		if got := readLine(t, r); got != "want" {
			t.Errorf("asked with %q", got)
		}
	}
	if err := c.Release(Burst{Kind: KindBurst, Label: "Benchmark X/size=2", Run: 1, Seq: 2, N: 100, Median: 25000, Min: 20000}); err != nil {
		t.Fatal(err)
	}
	line := readLine(t, r)
	m, err := Parse(line)
	if err != nil || m.Burst.Label != "Benchmark_X/size=2" || m.Burst.Median != 25000 || m.Burst.Seq != 2 {
		t.Errorf("done line %q parsed as %+v, %v", line, m, err)
	}
}

func TestClientTimesOutAndRejects(t *testing.T) {
	c, r, w := pair(t, 50*time.Millisecond)
	readLine(t, r)
	start := time.Now()
	_, err := c.Acquire()
	if err == nil || !strings.Contains(err.Error(), "no turn within") {
		t.Errorf("Acquire with a silent conductor: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timed out after %v", d)
	}
	w.WriteString("stop\n")
	if _, err := c.Acquire(); err == nil || !strings.Contains(err.Error(), `"stop"`) {
		t.Errorf("Acquire after a bad line: %v", err)
	}
	w.Close()
	if _, err := c.Acquire(); err == nil {
		t.Error("Acquire after the conductor closed: no error")
	}
}

func TestClientAllocatesNothing(t *testing.T) {
	c, r, w := pair(t, 5*time.Second)
	readLine(t, r)
	if r.Buffered() != 0 {
		t.Fatalf("%d bytes after hello", r.Buffered())
	}
	// Drain what the client writes without allocating (AllocsPerRun
	// counts every goroutine's allocations).
	done := make(chan struct{})
	go func() {
		defer close(done)
		var buf [256]byte
		for {
			if _, err := w.Read(buf[:]); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { c.f.Close(); <-done })
	b := Burst{Kind: KindBurst, Label: "BenchmarkRDMAWrite/size=2", Run: 1, Seq: 1, N: 100, Median: 1, Min: 1}
	n := testing.AllocsPerRun(100, func() {
		w.WriteString("go 100\n")
		if _, err := c.Acquire(); err != nil {
			t.Fatal(err)
		}
		if err := c.Release(b); err != nil {
			t.Fatal(err)
		}
	})
	// WriteString on the conductor's side is counted too; it allocates nothing.
	if n != 0 {
		t.Errorf("%g allocations per turn, want 0", n)
	}
}

func TestFromEnvRejectsBadValue(t *testing.T) {
	fromEnvDone = false
	t.Cleanup(func() { fromEnvDone, fromEnv, fromEnvErr = false, nil, nil })
	t.Setenv(EnvFD, "abc")
	if _, err := FromEnv(time.Second); err == nil || !strings.Contains(err.Error(), EnvFD) {
		t.Errorf("FromEnv with %s=abc: %v", EnvFD, err)
	}
}

// TestNewClientRefusesNonSocket: a descriptor that is not a unix stream
// socket (a file the runtime opened, a pipe, a datagram socket) is refused
// before anything is written to it, and left open: it is not ours to close.
func TestNewClientRefusesNonSocket(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "notasocket")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	dgram, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.CloseOnExec(dgram[0]) // SOCK_CLOEXEC is Linux's; this builds everywhere
	unix.CloseOnExec(dgram[1])
	defer unix.Close(dgram[0])
	defer unix.Close(dgram[1])
	for name, fd := range map[string]int{"file": int(f.Fd()), "pipe": int(w.Fd()), "datagram socket": dgram[0]} {
		c, err := NewClient(fd, time.Second)
		if err == nil {
			t.Errorf("%s: NewClient took it", name)
			c.f.Close()
			continue
		}
		if !strings.Contains(err.Error(), EnvFD) || !strings.Contains(err.Error(), "not the unix stream socket rdmaab passes") {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			t.Errorf("%s: descriptor %d closed: %v", name, fd, err)
		}
	}
	if b, _ := os.ReadFile(f.Name()); len(b) != 0 {
		t.Errorf("wrote %q into the file", b)
	}
}
