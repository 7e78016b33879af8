//go:build cgo && linux

package loops

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The clock the loops read once per sample costs well under a
// microsecond on a host (FACTS: 78 ns in the VM with tsc=reliable).
func TestClockCost(t *testing.T) {
	c := ClockCost(1 << 16)
	assert.Positive(t, c)
	assert.Less(t, c, 5000.0)
	t.Logf("clock read: %.0f ns", c)
}
