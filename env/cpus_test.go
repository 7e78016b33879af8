package env

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCPUList(t *testing.T) {
	assert.Equal(t, []int{0, 1, 2, 3, 8, 10, 11}, ParseCPUList("0-3,8,10-11"))
	assert.Equal(t, []int{5}, ParseCPUList("x,5,3-1"))
	assert.Equal(t, "0-3,8,10-11", FormatCPUList([]int{11, 10, 8, 3, 2, 1, 0, 0}))
	assert.Equal(t, "", FormatCPUList(nil))
}

// TestPinFrom: the default pair is the last two allowed CPUs; one named
// CPU replaces the initiator, and the responder moves to the other of the
// last two when they would collide; loopback refuses fewer than two.
func TestPinFrom(t *testing.T) {
	for _, tc := range []struct {
		named, allowed []int
		want           [2]int
		err            string
	}{
		{nil, []int{0, 1, 2, 3}, [2]int{2, 3}, ""},
		{nil, []int{0, 5, 9}, [2]int{5, 9}, ""},
		{[]int{1}, []int{0, 1, 2, 3}, [2]int{1, 3}, ""},
		{[]int{3}, []int{0, 1, 2, 3}, [2]int{3, 2}, ""},
		{[]int{9}, []int{0, 5, 9}, [2]int{9, 5}, ""},
		{nil, []int{4}, [2]int{NoCPU, NoCPU}, "loopback needs two CPUs for its two busy-polling threads, this process may use 4 (set RDMABENCH_CPUS=none to run unpinned anyway)"},
	} {
		got, err := pinFrom(tc.named, tc.allowed)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err)
		} else {
			assert.NoError(t, err)
		}
		assert.Equal(t, tc.want, got, "named %v allowed %v", tc.named, tc.allowed)
	}
}

func TestPinCPUs(t *testing.T) {
	got, err := Config{NoPin: true}.PinCPUs()
	require.NoError(t, err)
	assert.Equal(t, [2]int{NoCPU, NoCPU}, got)
	got, err = Config{CPUs: []int{7, 4}}.PinCPUs()
	require.NoError(t, err)
	assert.Equal(t, [2]int{7, 4}, got, "two named CPUs are taken as they are")

	allowed, err := AllowedCPUs()
	require.NoError(t, err)
	def, err := DefaultCPUs()
	require.NoError(t, err)
	assert.Equal(t, allowed[max(0, len(allowed)-2):], def)
	got, err = Config{}.PinCPUs()
	if len(allowed) < 2 {
		assert.Error(t, err)
		got, err = Config{Peer: "nodeB:18515"}.PinCPUs()
		require.NoError(t, err, "two-node mode runs unpinned rather than fail")
		assert.Equal(t, [2]int{NoCPU, NoCPU}, got)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, [2]int{def[0], def[1]}, got)
}
