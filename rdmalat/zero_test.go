package rdmalat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A zero CPU field is the default, never CPU 0: LoopbackConfig's takes
// DefaultCPUs (two busy-polling threads on CPU 0 would spoil each other),
// ResponderConfig's leaves the thread unpinned; CPU0 is CPU 0.
func TestCPUFieldZero(t *testing.T) {
	def, err := DefaultCPUs()
	require.NoError(t, err)
	for _, tc := range []struct {
		fields, want [2]int
	}{
		{[2]int{}, def},
		{[2]int{NoCPU, NoCPU}, [2]int{NoCPU, NoCPU}},
		{[2]int{CPU0, 3}, [2]int{0, 3}},
		{[2]int{0, NoCPU}, [2]int{def[0], NoCPU}},
		{[2]int{5, 0}, [2]int{5, def[1]}},
	} {
		got, err := loopbackCPUs(tc.fields)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "LoopbackConfig.CPUs %v", tc.fields)
	}
	for field, want := range map[int]int{0: NoCPU, NoCPU: NoCPU, CPU0: 0, 3: 3} {
		assert.Equal(t, want, NewLocalResponder(nil, PeerInfo{}, ResponderConfig{CPU: field}).cpu, "ResponderConfig.CPU %d", field)
	}
}
