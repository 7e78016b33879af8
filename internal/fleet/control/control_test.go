package control

import (
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/fleet"
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
	_, err := readLine(NewReader(src))
	require.ErrorIs(t, err, ErrLineTooLong)
	assert.LessOrEqual(t, src.read, int64(MaxLine+512+512), "bytes consumed")
	t.Logf("refused after reading %d of %d bytes", src.read, src.limit)

	for _, tc := range []struct {
		in   string
		want string
		err  error
	}{
		{"ready\n", "ready", nil},
		{"ready\r\n", "ready", nil},
		{strings.Repeat("a", MaxLine) + "\n", strings.Repeat("a", MaxLine), nil},
		{strings.Repeat("a", MaxLine+1) + "\n", "", ErrLineTooLong},
		{"half a line", "", io.ErrUnexpectedEOF},
		{"", "", io.EOF},
	} {
		got, err := readLine(NewReader(strings.NewReader(tc.in)))
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
func handshake(t *testing.T, src, dst Session) (srcErr, dstErr, doneErr error) {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	dstDone := make(chan [2]error, 1)
	go func() {
		r := NewReader(b)
		nonce := "d0d0"
		srcNonce, err := dst.DstHello(b, r, nonce)
		if err != nil {
			b.Close()
			dstDone <- [2]error{err, nil}
			return
		}
		io.WriteString(b, dst.Ready(srcNonce))
		dstDone <- [2]error{nil, dst.CheckDone(r, nonce)}
	}()
	r := NewReader(a)
	dstNonce, failed, err := src.SrcHandshake(a, r)
	if err == nil {
		assert.Empty(t, failed)
		err = src.SendDone(a, dstNonce)
	} else {
		a.Close()
	}
	res := <-dstDone
	return err, res[0], res[1]
}

// TestControlHandshake: only the two agents of this job's pair of this
// round get through; everything else is refused by name.
func TestControlHandshake(t *testing.T) {
	good := Session{Token: testToken, Step: testStep}
	srcErr, dstErr, doneErr := handshake(t, good, good)
	require.NoError(t, srcErr)
	require.NoError(t, dstErr)
	require.NoError(t, doneErr)

	other := Session{Token: strings.Repeat("f", 64), Step: testStep}
	_, dstErr, _ = handshake(t, other, good)
	assert.ErrorContains(t, dstErr, "its MAC does not match this job's token", "another job's agent")

	round3 := good
	round3.Step.Round = 3
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
	c := Session{Token: testToken, Step: testStep}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		r := NewReader(b)
		srcNonce, err := c.DstHello(b, r, "d1")
		if err == nil {
			io.WriteString(b, c.Fail(srcNonce, "rdmapeer exited  before\tlistening"))
		}
	}()
	_, failed, err := c.SrcHandshake(a, NewReader(a))
	require.NoError(t, err)
	assert.Equal(t, "rdmapeer exited before listening", failed)
}

func TestParseLineVersion(t *testing.T) {
	_, _, err := parseLine("rdmafleet-agent 2 hello x")
	assert.EqualError(t, err, "the other agent speaks control protocol 2, this one 1: run the same rdmafleet on every node")
	_, _, err = parseLine("ready")
	assert.ErrorContains(t, err, `not an rdmafleet agent's control line: "ready"`)
}

// TestPeerTokenPerPair: a pair's rdmapeer token is derived from the job's
// token, the round and the pair, so that a benchmark of another pair or
// round cannot use this pair's rdmapeer, and it does not reveal the job's
// token; ChildEnv gives children that token and never the job's.
func TestPeerTokenPerPair(t *testing.T) {
	const job = "0123456789abcdef0123456789abcdef"
	tok := func(token string, round int, src, dst string) string {
		return Session{Token: token, Step: fleet.Step{Pair: fleet.Pair{Src: src, Dst: dst}, Round: round}}.PeerToken()
	}
	seen := map[string]string{}
	for _, c := range []struct {
		token    string
		round    int
		src, dst string
	}{{job, 1, "n1", "n2"}, {job, 2, "n1", "n2"}, {job, 1, "n2", "n1"}, {job, 1, "n1", "n3"}, {job + "x", 1, "n1", "n2"}, {job, 11, "n1", "n2"}, {job, 1, "n11", "n2"}} {
		got := tok(c.token, c.round, c.src, c.dst)
		assert.Len(t, got, 64, "HMAC-SHA256 in hex")
		assert.NotContains(t, got, job)
		assert.Equal(t, got, tok(c.token, c.round, c.src, c.dst), "both agents derive the same")
		key := fmt.Sprint(c)
		if other, ok := seen[got]; ok {
			t.Errorf("%s and %s have the same rdmapeer token", key, other)
		}
		seen[got] = key
	}
	env := ChildEnv([]string{"PATH=/bin", EnvToken + "=" + job, "RDMABENCH_PEER_TOKEN=old"}, "pairs")
	assert.Equal(t, []string{"PATH=/bin", "RDMABENCH_PEER_TOKEN=pairs"}, env)
}
