package rdmalat

import "os"

// newSampleBuffer returns a buffer for n samples with every page of it
// already backed by memory. A fresh large allocation is not written by Go
// (memory just returned by debug.FreeOSMemory, as startRun does, is known
// to be zero), so without this the C loop's own stores would fault its
// pages in one by one inside the measured loop: one page fault every 512
// samples, each a stall in the soft-RoCE VM. perftest faults its sample
// array in the same way.
func newSampleBuffer(n int) []int64 {
	b := make([]int64, n)
	perPage := max(os.Getpagesize()/8, 1)
	for i := 0; i < n; i += perPage {
		b[i] = 0 // a write: a read would map the shared zero page
	}
	if n > 0 {
		b[n-1] = 0
	}
	return b
}
