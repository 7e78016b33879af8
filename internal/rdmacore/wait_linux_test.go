package rdmacore_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/rdmacore"
)

func TestWaitReadable(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	fd := int(r.Fd())

	// Nothing to read: it returns after its timeout, with no error.
	start := time.Now()
	require.NoError(t, rdmacore.WaitReadable(fd, 30))
	assert.GreaterOrEqual(t, time.Since(start), 25*time.Millisecond)

	// Readable: it returns at once, even with no timeout at all.
	_, err = w.Write([]byte{1})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- rdmacore.WaitReadable(fd, -1) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("WaitReadable did not return for a readable descriptor")
	}
}
