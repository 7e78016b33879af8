// Package control is the protocol the two agents of a fleet pair speak
// to each other.
//
// The agents of a pair talk over one TCP connection, dst listening on its
// node's own address. Every line is "rdmafleet-agent VERSION KIND ..." and
// carries an HMAC-SHA256, keyed with the job's token, over its kind, the
// round, the pair and the other side's nonce, so that only the two agents
// of this pair of this job (and round) can speak:
//
//	dst: hello NONCE_D
//	src: auth R SRC DST NONCE_S MAC(auth R SRC DST NONCE_D NONCE_S)
//	dst: ready MAC(ready R SRC DST NONCE_S)      or fail REASON MAC(...)
//	src: done MAC(done R SRC DST NONCE_D)
//
// dst refuses a connection that does not answer its hello so, and goes on
// waiting for the real src; src refuses a dst that cannot answer its
// nonce. The token never crosses the network.
package control

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/fleet"
)

const (
	ctlPrefix  = "rdmafleet-agent"
	ctlVersion = "1"
	// MaxLine bounds one control line: a reader never buffers more.
	MaxLine = 4096
)

// EnvToken carries the job's token from rdmafleet run to its agents
// (srun passes the environment on); the agents pass each pair's own
// token on to rdmapeer and the benchmark as RDMABENCH_PEER_TOKEN.
const EnvToken = env.VarFleetToken

// NewJobToken draws a job's token.
func NewJobToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("drawing the job's token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// NewNonce draws a nonce for one connection.
func NewNonce() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("drawing a nonce: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// A Session is one side's view of a pair's control connection: the job's
// token and the step both agents run.
type Session struct {
	Token string
	Step  fleet.Step
}

func (s Session) mac(fields ...string) string {
	h := hmac.New(sha256.New, []byte(s.Token))
	fmt.Fprintf(h, "%s %s", ctlPrefix, ctlVersion)
	for _, f := range fields {
		fmt.Fprintf(h, " %d:%s", len(f), f) // length-prefixed: no two field lists collide
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (s Session) id() []string {
	return []string{fmt.Sprint(s.Step.Round), s.Step.Src, s.Step.Dst}
}

// peerToken is the pair's rdmapeer token: its own, so that a benchmark of
// another pair cannot use this pair's rdmapeer.
func (s Session) PeerToken() string { return s.mac(append([]string{"rdmapeer"}, s.id()...)...) }

func line(kind string, fields ...string) string {
	return strings.Join(append([]string{ctlPrefix, ctlVersion, kind}, fields...), " ") + "\n"
}

// parseLine splits a control line, checking its prefix and version.
func parseLine(text string) (kind string, fields []string, err error) {
	f := strings.Fields(text)
	switch {
	case len(f) < 3 || f[0] != ctlPrefix:
		return "", nil, fmt.Errorf("not an rdmafleet agent's control line: %q", clip(text))
	case f[1] != ctlVersion:
		return "", nil, fmt.Errorf("the other agent speaks control protocol %s, this one %s: run the same rdmafleet on every node", f[1], ctlVersion)
	}
	return f[2], f[3:], nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// ErrLineTooLong: a control line over MaxLine bytes.
var ErrLineTooLong = fmt.Errorf("a control line over %d bytes", MaxLine)

// readLine reads one line of at most MaxLine bytes from r, without
// the newline. It never holds more than that: a stream without a newline
// fails once the bound is passed, having read at most MaxLine plus
// r's buffer.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(b)+len(chunk) > MaxLine+1 {
			return "", ErrLineTooLong
		}
		b = append(b, chunk...)
		switch {
		case err == nil:
			return strings.TrimRight(string(b), "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(b) > 0:
			return "", io.ErrUnexpectedEOF
		default:
			return "", err
		}
	}
}

// NewReader wraps a control connection for ReadLine: a small buffer.
func NewReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 512) }

// expect reads a line of kind want with n fields after it, or fails
// saying what came instead. A "fail" line is returned as such for the
// caller to check.
func expect(r *bufio.Reader, want string, n int) ([]string, error) {
	text, err := readLine(r)
	if err != nil {
		return nil, err
	}
	kind, fields, err := parseLine(text)
	if err != nil {
		return nil, err
	}
	if kind != want || len(fields) != n {
		return nil, fmt.Errorf("expected %q with %d fields, got %q", want, n, clip(text))
	}
	return fields, nil
}

// SrcHandshake is src's side: answer dst's hello, check its ready.
// It returns dst's nonce (for done), or dst's failure reason.
func (s Session) SrcHandshake(w io.Writer, r *bufio.Reader) (dstNonce string, failed string, err error) {
	f, err := expect(r, "hello", 1)
	if err != nil {
		return "", "", err
	}
	dstNonce = f[0]
	srcNonce, err := NewNonce()
	if err != nil {
		return "", "", err
	}
	id := s.id()
	if _, err := io.WriteString(w, line("auth", append(id, srcNonce, s.mac(append(append([]string{"auth"}, id...), dstNonce, srcNonce)...))...)); err != nil {
		return "", "", err
	}
	text, err := readLine(r)
	if err != nil {
		return "", "", err
	}
	kind, fields, err := parseLine(text)
	if err != nil {
		return "", "", err
	}
	switch {
	case kind == "ready" && len(fields) == 1 && hmac.Equal([]byte(fields[0]), []byte(s.mac(append(append([]string{"ready"}, id...), srcNonce)...))):
		return dstNonce, "", nil
	case kind == "fail" && len(fields) >= 1:
		reason := strings.Join(fields[:len(fields)-1], " ")
		if hmac.Equal([]byte(fields[len(fields)-1]), []byte(s.mac(append(append([]string{"fail"}, id...), srcNonce, reason)...))) {
			return dstNonce, reason, nil
		}
	}
	return "", "", fmt.Errorf("the answer %q is not from this job's agent for %s %s (wrong token, round or pair)", clip(text), s.Step.Src, s.Step.Dst)
}

// SendDone is src's last line.
func (s Session) SendDone(w io.Writer, dstNonce string) error {
	_, err := io.WriteString(w, line("done", s.mac(append(append([]string{"done"}, s.id()...), dstNonce)...)))
	return err
}

// DstHello is dst's side up to ready: send hello, check src's auth. It
// returns src's nonce.
func (s Session) DstHello(w io.Writer, r *bufio.Reader, dstNonce string) (string, error) {
	if _, err := io.WriteString(w, line("hello", dstNonce)); err != nil {
		return "", err
	}
	f, err := expect(r, "auth", 5)
	if err != nil {
		return "", err
	}
	id := s.id()
	if f[0] != id[0] || f[1] != id[1] || f[2] != id[2] {
		return "", fmt.Errorf("it speaks for round %s %s %s, not round %s %s %s", f[0], f[1], f[2], id[0], id[1], id[2])
	}
	srcNonce := f[3]
	if !hmac.Equal([]byte(f[4]), []byte(s.mac(append(append([]string{"auth"}, id...), dstNonce, srcNonce)...))) {
		return "", errors.New("its MAC does not match this job's token")
	}
	return srcNonce, nil
}

// Ready is dst's line once its rdmapeer listens.
func (s Session) Ready(srcNonce string) string {
	return line("ready", s.mac(append(append([]string{"ready"}, s.id()...), srcNonce)...))
}

// Fail is dst's line when its rdmapeer did not start, with the reason.
func (s Session) Fail(srcNonce, reason string) string {
	reason = strings.Join(strings.Fields(reason), " ")
	return line("fail", reason, s.mac(append(append([]string{"fail"}, s.id()...), srcNonce, reason)...))
}

// CheckDone checks src's done line.
func (s Session) CheckDone(r *bufio.Reader, dstNonce string) error {
	f, err := expect(r, "done", 1)
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(f[0]), []byte(s.mac(append(append([]string{"done"}, s.id()...), dstNonce)...))) {
		return errors.New("a done whose MAC does not match this job's token")
	}
	return nil
}

// ChildEnv is the environment of the agent's children: without the job's
// token, with the pair's rdmapeer token.
func ChildEnv(env []string, peerToken string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if strings.HasPrefix(kv, EnvToken+"=") || strings.HasPrefix(kv, "RDMABENCH_PEER_TOKEN=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "RDMABENCH_PEER_TOKEN="+peerToken)
}
