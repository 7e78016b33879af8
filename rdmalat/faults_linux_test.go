package rdmalat_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/internal/spec"
)

// The measuring thread takes no page fault while it measures: the
// samples' buffer is backed before the loop writes it; otherwise the
// loop faults one page in every 512 samples, each fault a stall in the
// soft-RoCE VM. Run fixed-length (one C call), nothing may fault; run in
// chunks, the thread may take a fault or two between chunks, outside the
// loop.
func TestMeasuredLoopTakesNoPageFaults(t *testing.T) {
	for _, v := range []variant{{spec.FetchAdd, spec.RC, false}, {spec.Write, spec.RC, false}} {
		p := newPair(t, v, "", 64)
		for _, expect := range []bool{true, false} {
			run, err := p.Start(8, 0)
			require.NoError(t, err)
			const n = 5000
			if expect {
				run.Expect(n)
			}
			// Start locked this goroutine to the measuring thread.
			var before, after unix.Rusage
			require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &before))
			for range n {
				if _, err := run.Next(); err != nil {
					require.NoError(t, err)
				}
			}
			require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &after))
			require.NoError(t, run.Close())
			allowed := int64(0)
			if !expect {
				allowed = 2
			}
			assert.LessOrEqual(t, after.Minflt-before.Minflt, allowed, "%v, Expect %v: minor page faults on the measuring thread in %d samples", v, expect, n)
			assert.Zero(t, after.Majflt-before.Majflt, "%v, Expect %v: major page faults", v, expect)
		}
	}
}
