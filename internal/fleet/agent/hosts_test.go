package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadHosts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(path, []byte("# the bed\n10.0.0.1 n1 n1.lan\n\n10.0.0.2 n2 # second\n"), 0o644))
	h, err := readHosts(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"n1": "10.0.0.1", "n1.lan": "10.0.0.1", "n2": "10.0.0.2"}, h)

	h, err = readHosts("")
	require.NoError(t, err)
	assert.Empty(t, h, "no file: names resolve")

	require.NoError(t, os.WriteFile(path, []byte("10.0.0.1 n1\n10.0.0.2\n"), 0o644))
	_, err = readHosts(path)
	assert.EqualError(t, err, path+`:2: "10.0.0.2": want "address name..." as in /etc/hosts`)
	_, err = readHosts(filepath.Join(t.TempDir(), "none"))
	assert.ErrorContains(t, err, "-hosts: ")
}
