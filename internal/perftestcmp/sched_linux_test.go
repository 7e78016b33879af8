package perftestcmp

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The scheduler reader runs only when asked for: its reads perturb the
// runs it watches.
func TestWatchSchedOnlyWhenAsked(t *testing.T) {
	c := &Config{}
	assert.False(t, c.watchSched(os.Getpid())().Read, "read without -sched")
	c.Sched = true
	assert.True(t, c.watchSched(os.Getpid())().Read, "-sched read nothing of this process")
}
