package rdmacm_test

import (
	"testing"

	"github.com/rdmabench/rdmabench/internal/rdmacm"
	"github.com/rdmabench/rdmabench/testenv"
)

// The internal tests find their devices through testenv, which they cannot
// import themselves (testenv -> rdmalat -> rdmacm: an import cycle).
func init() {
	rdmacm.SetTestDevices(func(tb testing.TB) (string, string) {
		c := testenv.MustHaveRDMA(tb)
		return c.Device, testenv.MustHaveSecondDevice(tb, c)
	})
}
