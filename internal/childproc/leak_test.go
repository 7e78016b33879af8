package childproc

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind; run as
// the helper parent of TestTieDiesWithParent, it is that parent instead.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperParent())
	}
	goleak.VerifyTestMain(m)
}
