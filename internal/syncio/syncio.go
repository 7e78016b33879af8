// Package syncio holds writers that several goroutines may share: the
// copiers of a child process's standard output and standard error, or
// the log of a test that runs two agents at once.
package syncio

import (
	"bytes"
	"io"
	"sync"
)

// A Writer serialises the writes to an io.Writer, so that each Write
// reaches it whole.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A Buffer is a bytes.Buffer that goroutines may write and read at once.
// The zero value is an empty buffer ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
