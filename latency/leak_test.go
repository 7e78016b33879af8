package latency

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind: one that
// allocates while TestRecorderMemoryConstant counts would fail it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
