package nicstats

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakePort writes a sysfs port tree: files maps "counters/x" or
// "hw_counters/y" to contents.
func fakePort(t *testing.T, dev string, port int, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, v := range files {
		p := filepath.Join(root, dev, "ports", strconv.Itoa(port), rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(v), 0o644))
	}
	return root
}

func TestRead(t *testing.T) {
	root := fakePort(t, "rxe0", 1, map[string]string{
		"counters/port_xmit_packets": "1200\n",
		"counters/link_downed":       "0\n",
		"hw_counters/rcvd_seq_err":   "7\n",
		"hw_counters/link_downed":    "1\n",
		"hw_counters/lifespan":       "10\n",
		"hw_counters/garbage":        "not a number\n",
		"hw_counters/huge":           strings.Repeat("9", 100),
	})
	s, err := Read(root, "rxe0", 1)
	require.NoError(t, err)
	assert.Equal(t, Snapshot{
		"port_xmit_packets": 1200, "link_downed": 0,
		"hw.rcvd_seq_err": 7, "hw.link_downed": 1, "hw.lifespan": 10,
	}, s, "a file that is not one decimal number is left out")

	// Only hw_counters (a driver with no port counters) is enough.
	root = fakePort(t, "rxe1", 2, map[string]string{"hw_counters/sent_pkts": "3"})
	s, err = Read(root, "rxe1", 2)
	require.NoError(t, err)
	assert.Equal(t, Snapshot{"hw.sent_pkts": 3}, s)

	_, err = Read(root, "rxe1", 1)
	assert.ErrorIs(t, err, os.ErrNotExist, "no such port")
	_, err = Read(root, "../etc", 1)
	assert.ErrorContains(t, err, "want a name such as rxe0")
	_, err = Read(root, "rxe1", 0)
	assert.ErrorContains(t, err, "want 1..255")
}

func TestReadBounded(t *testing.T) {
	files := map[string]string{}
	for i := range maxCounters + 1 {
		files[fmt.Sprintf("hw_counters/c%03d", i)] = "1"
	}
	root := fakePort(t, "rxe0", 1, files)
	_, err := Read(root, "rxe0", 1)
	assert.ErrorContains(t, err, "more than 512 counters")
}

func TestDiff(t *testing.T) {
	before := Snapshot{"hw.sent_pkts": 100, "hw.rcvd_seq_err": 2, "port_rcv_data": 4294967295, "hw.gone": 1, "same": 5}
	after := Snapshot{"hw.sent_pkts": 140, "hw.rcvd_seq_err": 5, "port_rcv_data": 10, "hw.new": 9, "same": 5}
	assert.Equal(t, []Change{{"hw.rcvd_seq_err", 3}, {"hw.sent_pkts", 40}}, Diff(before, after),
		"sorted; unchanged, wrapped (port_rcv_data), new and gone counters left out")
	assert.Empty(t, Diff(after, after))
	assert.Equal(t, "hw.rcvd_seq_err/op", Unit("hw.rcvd_seq_err"))
}
