//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/fleet"
)

// endless is a stream of 'x' with no newline, up to limit bytes, that
// counts what was read from it.
type endless struct {
	limit, read int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.limit {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), e.limit-e.read))
	for i := range n {
		p[i] = 'x'
	}
	e.read += int64(n)
	return n, nil
}

// TestReadLineBounded: 400 MiB without a newline is refused after a few
// KiB read, not buffered (an agent once grew from 8 MB to 437 MB on it).
func TestReadLineBounded(t *testing.T) {
	src := &endless{limit: 400 << 20}
	_, err := readLine(newCtlReader(src))
	require.ErrorIs(t, err, errLineTooLong)
	assert.LessOrEqual(t, src.read, int64(maxCtlLine+512+512), "bytes consumed")
	t.Logf("refused after reading %d of %d bytes", src.read, src.limit)

	for _, tc := range []struct {
		in   string
		want string
		err  error
	}{
		{"ready\n", "ready", nil},
		{"ready\r\n", "ready", nil},
		{strings.Repeat("a", maxCtlLine) + "\n", strings.Repeat("a", maxCtlLine), nil},
		{strings.Repeat("a", maxCtlLine+1) + "\n", "", errLineTooLong},
		{"half a line", "", io.ErrUnexpectedEOF},
		{"", "", io.EOF},
	} {
		got, err := readLine(newCtlReader(strings.NewReader(tc.in)))
		if tc.err != nil {
			assert.ErrorIs(t, err, tc.err, "%.20q", tc.in)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
}

var testStep = fleet.Step{Round: 2, Pair: fleet.Pair{Src: "n1", Dst: "n2"}}

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// handshake runs src's and dst's sides over a pipe with the tokens and
// steps given, and returns both errors and dst's nonce check of done.
func handshake(t *testing.T, src, dst ctl) (srcErr, dstErr, doneErr error) {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	dstDone := make(chan [2]error, 1)
	go func() {
		r := newCtlReader(b)
		nonce := "d0d0"
		srcNonce, err := dst.dstHello(b, r, nonce)
		if err != nil {
			b.Close()
			dstDone <- [2]error{err, nil}
			return
		}
		io.WriteString(b, dst.ready(srcNonce))
		dstDone <- [2]error{nil, dst.checkDone(r, nonce)}
	}()
	r := newCtlReader(a)
	dstNonce, failed, err := src.srcHandshake(a, r)
	if err == nil {
		assert.Empty(t, failed)
		err = src.sendDone(a, dstNonce)
	} else {
		a.Close()
	}
	res := <-dstDone
	return err, res[0], res[1]
}

// TestControlHandshake: only the two agents of this job's pair of this
// round get through; everything else is refused by name.
func TestControlHandshake(t *testing.T) {
	good := ctl{token: testToken, step: testStep}
	srcErr, dstErr, doneErr := handshake(t, good, good)
	require.NoError(t, srcErr)
	require.NoError(t, dstErr)
	require.NoError(t, doneErr)

	other := ctl{token: strings.Repeat("f", 64), step: testStep}
	_, dstErr, _ = handshake(t, other, good)
	assert.ErrorContains(t, dstErr, "its MAC does not match this job's token", "another job's agent")

	round3 := good
	round3.step.Round = 3
	_, dstErr, _ = handshake(t, round3, good)
	assert.ErrorContains(t, dstErr, "it speaks for round 3 n1 n2, not round 2 n1 n2")

	// A dst of another job cannot tell src "ready".
	srcErr, _, _ = handshake(t, good, other)
	if srcErr == nil {
		t.Fatal("src believed another job's dst")
	}
}

// TestFailLine: dst's failure reason reaches src intact and checked.
func TestFailLine(t *testing.T) {
	c := ctl{token: testToken, step: testStep}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		r := newCtlReader(b)
		srcNonce, err := c.dstHello(b, r, "d1")
		if err == nil {
			io.WriteString(b, c.fail(srcNonce, "rdmapeer exited  before\tlistening"))
		}
	}()
	_, failed, err := c.srcHandshake(a, newCtlReader(a))
	require.NoError(t, err)
	assert.Equal(t, "rdmapeer exited before listening", failed)
}

func TestParseLineVersion(t *testing.T) {
	_, _, err := parseLine("rdmafleet-agent 2 hello x")
	assert.EqualError(t, err, "the other agent speaks control protocol 2, this one 1: run the same rdmafleet on every node")
	_, _, err = parseLine("ready")
	assert.ErrorContains(t, err, `not an rdmafleet agent's control line: "ready"`)
}

// TestStrayCannotEndPair: while dst's agent waits for its partner, a
// stranger on its control port that speaks the old protocol (reads
// "ready", answers "done"), one that sends 400 MiB without a newline,
// and one that is silent, are all refused; the real src then measures
// the pair, and dst ends with it, not before. (Once, the stranger's
// "done" ended dst with exit 0 and the real src recorded "no agent on n2
// answered".)
func TestStrayCannotEndPair(t *testing.T) {
	bin := fakeBin(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, planFile), []byte("# pattern: file\n# nodes: n1 n2\n1 n1 n2\n"), 0o644))
	base := freePortBase(t, 2)
	args := []string{"-dir", dir, "-round", "1", "-bench", filepath.Join(bin, "rdmabench.test"), "-peer", filepath.Join(bin, "rdmapeer"),
		"-port-base", strconv.Itoa(base), "-timeout", "20s"}
	hosts := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("127.0.0.1 n1\n127.0.0.1 n2\n"), 0o644))
	args = append(args, "-hosts", hosts)
	env := func(node string) (func(string) string, []string) {
		m := map[string]string{"SLURMD_NODENAME": node, EnvFleetToken: testToken, "SLURM_JOB_ID": "77"}
		environ := os.Environ()
		for k, v := range m {
			environ = append(environ, k+"="+v)
		}
		return func(k string) string { return m[k] }, environ
	}
	var dstLog, srcLog bytes.Buffer
	dstCode := make(chan int, 1)
	go func() {
		getenv, environ := env("n2")
		dstCode <- runAgent(context.Background(), args, getenv, environ, &lockedBuffer{b: &dstLog})
	}()
	ctlAddr := "127.0.0.1:" + strconv.Itoa(base+1)

	var strays sync.WaitGroup
	dialStray := func() net.Conn {
		for deadline := time.Now().Add(10 * time.Second); ; {
			c, err := net.Dial("tcp", ctlAddr)
			if err == nil {
				return c
			}
			require.True(t, time.Now().Before(deadline), "dst never listened: %v", err)
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The old attack: read a line, answer done.
	old := dialStray()
	line, err := bufio.NewReader(old).ReadString('\n')
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(line, "rdmafleet-agent 1 hello "), line)
	fmt.Fprintln(old, "done")
	_, err = io.ReadAll(old)
	assert.NoError(t, err, "dst closes the stranger's connection")
	old.Close()
	// A flood without a newline, and a silent one.
	flood := dialStray()
	strays.Go(func() {
		defer flood.Close()
		_, _ = io.Copy(flood, &endless{limit: 400 << 20}) // fails once dst closes
	})
	silent := dialStray()
	defer silent.Close()

	select {
	case code := <-dstCode:
		t.Fatalf("dst ended (%d) before its partner came; its log:\n%s", code, dstLog.String())
	case <-time.After(300 * time.Millisecond):
	}
	getenv, environ := env("n1")
	srcCode := runAgent(context.Background(), args, getenv, environ, &srcLog)
	assert.Equal(t, 0, srcCode)
	assert.Equal(t, 0, <-dstCode)
	strays.Wait()
	t.Logf("src:\n%s\ndst:\n%s", srcLog.String(), dstLog.String())
	assert.FileExists(t, filepath.Join(dir, pairsDir, "round01-n1-n2.txt"), "the pair was measured")
	assert.NoFileExists(t, filepath.Join(dir, pairsDir, "round01-n1-n2.failed"))
	d := dstLog.String()
	assert.Contains(t, d, `refused a control connection from 127.0.0.1:`)
	assert.Contains(t, d, `not an rdmafleet agent's control line: "done"`)
	assert.Contains(t, d, "a control line over 4096 bytes")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
