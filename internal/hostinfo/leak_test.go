package hostinfo

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind: a leaked
// goroutine allocates and runs during later tests (it broke
// TestRecorderMemoryConstant's allocation count under -count).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
