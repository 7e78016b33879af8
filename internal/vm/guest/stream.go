package guest

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
)

// An ExitFilter passes the guest program's output through to w as it
// arrives, turning CR LF into LF, until it sees the end-of-run marker; it
// then records the status that follows the marker and drops everything after.
//
// Bytes that might be the start of the marker (or a CR before an LF) are held
// back until the next write shows what they are, so the marker never reaches
// w, even when it arrives split across writes.
type ExitFilter struct {
	w       io.Writer
	marker  []byte
	pending []byte // held back: a possible marker prefix or a final CR
	found   bool   // marker seen
	status  []byte // the status text after the marker, up to the newline
	done    bool   // status line complete
	err     error  // first error from w

	reported chan struct{} // closed when the status line is complete
}

// Reported returns a channel closed once the status line is complete.
func (f *ExitFilter) Reported() <-chan struct{} { return f.reported }

// NewExitFilter returns a filter that writes to w and looks for the
// marker of nonce.
func NewExitFilter(w io.Writer, nonce string) *ExitFilter {
	return &ExitFilter{w: w, marker: []byte(marker(nonce)), reported: make(chan struct{})}
}

// Write implements io.Writer. It never fails: an error from the underlying
// writer is kept in f.err, and the rest of the stream is still scanned for
// the marker.
func (f *ExitFilter) Write(p []byte) (int, error) {
	n := len(p)
	if f.found {
		f.readStatus(p)
		return n, nil
	}
	buf := append(f.pending, p...)
	f.pending = nil
	if i := bytes.Index(buf, f.marker); i >= 0 {
		f.emit(buf[:i])
		f.found = true
		f.readStatus(buf[i+len(f.marker):])
		return n, nil
	}
	keep := heldBack(buf, f.marker)
	f.emit(buf[:len(buf)-keep])
	f.pending = append([]byte(nil), buf[len(buf)-keep:]...)
	return n, nil
}

// heldBack returns how many bytes at the end of buf must wait for more
// input: the longest suffix that is a prefix of marker, or a lone final CR.
func heldBack(buf, marker []byte) int {
	for k := min(len(buf), len(marker)-1); k > 0; k-- {
		if bytes.Equal(buf[len(buf)-k:], marker[:k]) {
			return k
		}
	}
	if len(buf) > 0 && buf[len(buf)-1] == '\r' {
		return 1
	}
	return 0
}

// readStatus collects the status text after the marker.
func (f *ExitFilter) readStatus(p []byte) {
	if f.done {
		return
	}
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		f.status = append(f.status, p[:i]...)
		f.done = true
		close(f.reported)
		return
	}
	f.status = append(f.status, p...)
}

// emit writes p to w with each CR LF turned into LF.
func (f *ExitFilter) emit(p []byte) {
	if len(p) == 0 || f.err != nil {
		return
	}
	p = bytes.ReplaceAll(p, []byte("\r\n"), []byte("\n"))
	if _, err := f.w.Write(p); err != nil {
		f.err = err
	}
}

// Close flushes bytes held back when the stream ends without a marker.
func (f *ExitFilter) Close() error {
	if !f.found {
		f.emit(f.pending)
		f.pending = nil
	}
	return f.err
}

// Result returns the status after the marker: the program's exit status, or
// setup == true when the guest's setup failed. ok is false when no complete
// marker line was seen.
func (f *ExitFilter) Result() (status int, setup, ok bool) {
	if !f.found || !f.done {
		return 0, false, false
	}
	s := strings.TrimSpace(strings.TrimSuffix(string(f.status), "\r"))
	if s == setupFailed {
		return 0, true, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 255 {
		return 0, false, false
	}
	return n, false, true
}

// A Console keeps the guest's console output (kernel messages and /init's
// lines) for error reports, optionally echoing it, and signals when given
// lines appear.
type Console struct {
	mu    sync.Mutex
	buf   []byte
	echo  io.Writer // nil: do not echo
	line  []byte    // current partial line
	watch map[string]chan struct{}
	fired map[string]bool
}

// maxConsole bounds the console text kept in memory; older text is dropped.
const maxConsole = 1 << 20

// NewConsole returns a console log that echoes to echo (nil: not at all)
// and watches for lines containing the watch strings.
func NewConsole(echo io.Writer, watch ...string) *Console {
	c := &Console{echo: echo, watch: make(map[string]chan struct{}), fired: make(map[string]bool)}
	for _, w := range watch {
		c.watch[w] = make(chan struct{})
	}
	return c
}

// Seen returns a channel closed when a line containing s has been written.
func (c *Console) Seen(s string) <-chan struct{} {
	return c.watch[s]
}

// Write implements io.Writer.
func (c *Console) Write(p []byte) (int, error) {
	n := len(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	p = bytes.ReplaceAll(p, []byte("\r"), nil)
	c.buf = append(c.buf, p...)
	if len(c.buf) > maxConsole {
		c.buf = append([]byte(nil), c.buf[len(c.buf)-maxConsole/2:]...)
	}
	if c.echo != nil {
		c.echo.Write(p)
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.line = append(c.line, p...)
			break
		}
		c.line = append(c.line, p[:i]...)
		c.matchLine(string(c.line))
		c.line = c.line[:0]
		p = p[i+1:]
	}
	return n, nil
}

// matchLine closes the channels of the watched strings line contains.
func (c *Console) matchLine(line string) {
	for s, ch := range c.watch {
		if !c.fired[s] && strings.Contains(line, s) {
			close(ch)
			c.fired[s] = true
		}
	}
}

// Tail returns the last n lines of the console.
func (c *Console) Tail(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(c.buf), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
