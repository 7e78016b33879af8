package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestWriteFile: the file appears whole, with its mode, nothing beside it.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.txt")
	require.NoError(t, WriteFile(p, []byte("one\n"), 0o644))
	require.NoError(t, WriteFile(p, []byte("two\n"), 0o600))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "two\n", string(b))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	names, err := os.ReadDir(filepath.Dir(p))
	require.NoError(t, err)
	assert.Len(t, names, 1)
}

// TestWriteFails: a writer that fails half way leaves the old file as it
// was and no temporary file.
func TestWriteFails(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	require.NoError(t, WriteFile(p, []byte("old\n"), 0o644))
	boom := errors.New("killed")
	err := Write(p, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	assert.Same(t, boom, err)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(b))
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, names, 1)
}

// TestIsTemp: the temporary names are recognised, and only they.
func TestIsTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "current")
	var tmp string
	require.NoError(t, Write(p, 0o644, func(w io.Writer) error {
		tmp = w.(*os.File).Name()
		return nil
	}))
	assert.True(t, IsTemp(filepath.Base(tmp), "current"))
	assert.False(t, IsTemp("current", "current"))
	assert.False(t, IsTemp(".currently", "current"))
}
