package rdmalat_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/internal/spec"
)

// The measuring thread takes no page fault of its own while it measures:
// the samples' buffer is backed before the loop writes it; otherwise the
// loop faults one page in every 512 samples (9 or 10 in these 5000), each
// fault a stall in the soft-RoCE VM. Up to 2 are allowed, fixed-length
// (one C call) or in chunks: the kernel and the runtime add a few that no
// buffer of ours causes. Measured in the VM, 300 runs of this test: a
// fault inside the C call's bracket in 4, 1 or 2 each; in one of them
// khugepaged had collapsed two huge pages meanwhile (a collapse unmaps the
// range it merges); in the others no source was found (new pages were
// allocated meanwhile; the runtime's return from a long C call, on its
// own stack, is the likely place). In chunks the thread may also take
// one or two between chunks, in Go.
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
			assert.LessOrEqual(t, after.Minflt-before.Minflt, int64(2), "%v, Expect %v: minor page faults on the measuring thread in %d samples", v, expect, n)
			assert.Zero(t, after.Majflt-before.Majflt, "%v, Expect %v: major page faults", v, expect)
		}
	}
}
