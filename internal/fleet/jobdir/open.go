package jobdir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrNotRegular reports a job directory's file that is a FIFO, a device
// or a socket: opening a FIFO blocks until a writer comes, and a device
// like /dev/zero never ends, so readers refuse them.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge reports a file over the bound its reader sets.
var ErrTooLarge = errors.New("file too large")

// Open opens path for reading when it is a regular file (symlinks
// followed); the reads of the file it returns fail with ctx's error once
// ctx is done. It never blocks on a FIFO: the open does not wait for a
// writer, and the file is refused.
func Open(ctx context.Context, path string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, fi.Mode().Type())}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &ctxFile{ctx: ctx, f: f}, nil
}

// ReadFile reads the regular file at path, at most limit bytes of it
// (ErrTooLarge past them), stopping when ctx is done.
func ReadFile(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w: over %d bytes", path, ErrTooLarge, limit)
	}
	return b, nil
}

// ctxFile is a file whose reads end when its context does.
type ctxFile struct {
	ctx context.Context
	f   *os.File
}

func (c *ctxFile) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.f.Read(p)
}

func (c *ctxFile) Close() error { return c.f.Close() }
