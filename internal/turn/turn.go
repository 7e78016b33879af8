// Package turn is the protocol by which a conductor (rdmaab's duet) makes
// two benchmark processes alive at once take turns: each process runs its
// round trips only while it holds the turn, a burst at a time, and hands
// the turn back with the burst's summary. Between turns a process is
// blocked on a read: no thread of it spins.
//
// The conductor passes one end of a connected unix stream socket as an
// inherited file descriptor, named by RDMABENCH_TURN_FD. The protocol is
// lines of text:
//
//	process -> conductor: hello rdmabench-turn/1 <pid>
//	process -> conductor: want
//	conductor -> process: go <K>        (run a burst of K round trips)
//	process -> conductor: done <kind> <run> <seq> <n> <median_ns> <min_ns> <label>
//
// kind is "warmup" (the run's warm-up, not paired) or "burst"; run counts
// the process's runs of that label from 1, seq the bursts of the run from
// 1; n is the burst's round trips, median and min their round-trip times.
// The conductor pairs the bursts of the two processes by label, run and
// seq.
package turn

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/env"
)

// EnvFD names the inherited descriptor of the conductor's socket.
const EnvFD = env.VarTurnFD

// Version is the protocol's name and version, as the hello line carries
// it. A conductor looks for it in a test binary to tell whether the
// binary can take turns (a binary built before turn-taking lacks it).
const Version = "rdmabench-turn/1"

// Kinds of done lines.
const (
	KindWarmup = "warmup"
	KindBurst  = "burst"
)

// A Burst is what a process reports when it hands the turn back.
type Burst struct {
	Kind        string
	Label       string // the benchmark, e.g. BenchmarkRDMAWrite/size=2
	Run, Seq, N int
	Median, Min int64 // round-trip times, ns
}

// A Msg is one parsed line.
type Msg struct {
	Verb  string // hello, want, go, done
	PID   int    // hello
	K     int    // go
	Burst Burst  // done
}

// Parse reads one line of the protocol (without its newline).
func Parse(line string) (Msg, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return Msg{}, errors.New("turn: empty line")
	}
	m := Msg{Verb: f[0]}
	bad := func(want string) (Msg, error) {
		return Msg{}, fmt.Errorf("turn: %q: want %q", line, want)
	}
	switch f[0] {
	case "hello":
		if len(f) != 3 || f[1] != Version {
			return bad("hello " + Version + " <pid>")
		}
		pid, err := strconv.Atoi(f[2])
		if err != nil || pid <= 0 {
			return bad("hello " + Version + " <pid>")
		}
		m.PID = pid
	case "want":
		if len(f) != 1 {
			return bad("want")
		}
	case "go":
		k, err := strconv.Atoi(strings.Join(f[1:], " "))
		if len(f) != 2 || err != nil || k < 1 {
			return bad("go <round trips, at least 1>")
		}
		m.K = k
	case "done":
		const form = "done warmup|burst <run> <seq> <n> <median_ns> <min_ns> <label>"
		if len(f) != 8 || (f[1] != KindWarmup && f[1] != KindBurst) {
			return bad(form)
		}
		var n [5]int64
		for i := range n {
			v, err := strconv.ParseInt(f[2+i], 10, 64)
			if err != nil || v < 0 {
				return bad(form)
			}
			n[i] = v
		}
		m.Burst = Burst{Kind: f[1], Run: int(n[0]), Seq: int(n[1]), N: int(n[2]), Median: n[3], Min: n[4], Label: f[7]}
	default:
		return Msg{}, fmt.Errorf("turn: unknown line %q (want hello, want, go or done)", line)
	}
	return m, nil
}

// A Client is a benchmark process's end of the conductor's socket. Its
// methods allocate nothing after FromEnv.
type Client struct {
	f       *os.File
	timeout time.Duration
	out     []byte
	in      []byte // bytes read and not yet taken
	rbuf    [64]byte
}

var (
	fromEnvDone bool
	fromEnv     *Client
	fromEnvErr  error
)

// FromEnv returns the process's client when RDMABENCH_TURN_FD names a
// descriptor, after saying hello; nil when the variable is unset. The
// client is made once per process and shared. timeout bounds every wait
// for the conductor.
func FromEnv(timeout time.Duration) (*Client, error) {
	if fromEnvDone {
		return fromEnv, fromEnvErr
	}
	fromEnvDone = true
	v, ok := os.LookupEnv(EnvFD)
	if !ok {
		return nil, nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		fromEnvErr = fmt.Errorf("%s=%q: want the number of an inherited descriptor (3 or more), as rdmaab sets it; unset it to run alone", EnvFD, v)
		return nil, fromEnvErr
	}
	fromEnv, fromEnvErr = NewClient(fd, timeout)
	return fromEnv, fromEnvErr
}

// NewClient wraps descriptor fd and says hello. A descriptor that is not
// a unix stream socket is refused before anything touches it, and left
// open: a stale RDMABENCH_TURN_FD may name a file the runtime or a library
// opened, which is not ours to write to or close.
func NewClient(fd int, timeout time.Duration) (*Client, error) {
	if err := checkSocket(fd); err != nil {
		return nil, err
	}
	// Non-blocking first, so that os.NewFile makes it pollable and read
	// deadlines work.
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("%s=%d: %w (is the descriptor open?)", EnvFD, fd, err)
	}
	c := &Client{f: os.NewFile(uintptr(fd), "turn"), timeout: timeout, out: make([]byte, 0, 256)}
	c.out = append(c.out, "hello "+Version+" "...)
	c.out = strconv.AppendInt(c.out, int64(os.Getpid()), 10)
	if err := c.send(); err != nil {
		c.f.Close()
		return nil, err
	}
	return c, nil
}

// checkSocket fails unless fd is an open unix stream socket.
func checkSocket(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("%s=%d: %w (is the descriptor open? rdmaab sets it; unset it to run alone)", EnvFD, fd, err)
	}
	what := "a file"
	if st.Mode&unix.S_IFMT == unix.S_IFSOCK {
		sa, serr := unix.Getsockname(fd)
		_, isUnix := sa.(*unix.SockaddrUnix)
		typ, terr := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
		if serr == nil && terr == nil && isUnix && typ == unix.SOCK_STREAM {
			return nil
		}
		what = "another kind of socket"
	} else if st.Mode&unix.S_IFMT == unix.S_IFIFO {
		what = "a pipe"
	}
	return fmt.Errorf("%s=%d names %s, not the unix stream socket rdmaab passes; unset it to run alone", EnvFD, fd, what)
}

func (c *Client) send() error {
	c.out = append(c.out, '\n')
	if err := c.f.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return fmt.Errorf("turn: %w", err)
	}
	_, err := c.f.Write(c.out)
	c.out = c.out[:0]
	if err != nil {
		return fmt.Errorf("turn: writing to the conductor: %w", err)
	}
	return nil
}

// Acquire asks for the turn and blocks until the conductor gives it; it
// returns the burst's round trips.
func (c *Client) Acquire() (int, error) {
	c.out = append(c.out, "want"...)
	if err := c.send(); err != nil {
		return 0, err
	}
	if err := c.f.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, fmt.Errorf("turn: %w", err)
	}
	for {
		if i := indexNL(c.in); i >= 0 {
			line := c.in[:i]
			k, ok := parseGo(line)
			c.in = c.in[:copy(c.in, c.in[i+1:])]
			if !ok {
				return 0, fmt.Errorf("turn: the conductor said %q, want \"go <K>\"", line)
			}
			return k, nil
		}
		if len(c.in) == cap(c.rbuf) {
			return 0, errors.New("turn: the conductor sent a line too long")
		}
		n, err := c.f.Read(c.rbuf[len(c.in):])
		if n > 0 {
			c.in = c.rbuf[:len(c.in)+n]
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return 0, fmt.Errorf("turn: the conductor gave no turn within %v (RDMABENCH_TIMEOUT)", c.timeout)
			}
			return 0, fmt.Errorf("turn: reading from the conductor: %w", err)
		}
	}
}

// Release hands the turn back with the burst's summary.
func (c *Client) Release(b Burst) error {
	c.out = appendDone(c.out, b)
	return c.send()
}

// appendDone appends b's done line, without its newline, as Parse reads
// it back: the label's white space (what would split it into fields)
// becomes '_'.
func appendDone(out []byte, b Burst) []byte {
	out = append(out, "done "...)
	out = append(out, b.Kind...)
	for _, v := range [...]int64{int64(b.Run), int64(b.Seq), int64(b.N), b.Median, b.Min} {
		out = append(out, ' ')
		out = strconv.AppendInt(out, v, 10)
	}
	out = append(out, ' ')
	label := b.Label
	if label == "" {
		label = "run"
	}
	for i := 0; i < len(label); {
		r, n := utf8.DecodeRuneInString(label[i:])
		if unicode.IsSpace(r) {
			out = append(out, '_') // one field
		} else {
			out = append(out, label[i:i+n]...)
		}
		i += n
	}
	return out
}

func indexNL(b []byte) int {
	for i, ch := range b {
		if ch == '\n' {
			return i
		}
	}
	return -1
}

// parseGo reads "go <K>" without allocating.
func parseGo(b []byte) (int, bool) {
	if len(b) < 4 || string(b[:3]) != "go " {
		return 0, false
	}
	k := 0
	for _, ch := range b[3:] {
		if ch < '0' || ch > '9' || k > 1<<30 {
			return 0, false
		}
		k = 10*k + int(ch-'0')
	}
	return k, k >= 1
}
