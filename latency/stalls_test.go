package latency

import (
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
)

// TestRank: floor(p/100 * n + 0.5) clamped to [1, n].
func TestRank(t *testing.T) {
	for _, tc := range []struct {
		p       PPM
		n, want int64
	}{
		{500000, 7, 4}, // 3.5 + 0.5
		{500000, 4, 2}, // 2 + 0.5
		{500000, 1, 1}, // 0.5 + 0.5
		{990000, 1000, 990},
		{999000, 1000, 999},
		{999900, 1000, 1000}, // 999.9 + 0.5: clamped
		{500000, 0, 0},
		{1000, 10, 1}, // 0.01 + 0.5 rounds to 0: clamped to 1
	} {
		assert.Equal(t, tc.want, tc.p.Rank(tc.n), "%s of %d", tc.p.Name(), tc.n)
	}
}

// TestStallsOf: the exact count agrees with the histogram's where the
// samples are far apart.
func TestStallsOf(t *testing.T) {
	// Median 10: 101 and 500 are above 10x, 100 is not.
	raw := []int64{10, 10, 10, 10, 100, 101, 500}
	assert.Equal(t, int64(2), StallsOf(raw))
	h := hdrhistogram.New(1, 1000, 3)
	for _, v := range raw {
		h.RecordValue(v)
	}
	assert.Equal(t, int64(2), CountStalls(h))
	assert.Equal(t, int64(0), StallsOf(nil))
	assert.Equal(t, int64(0), CountStalls(hdrhistogram.New(1, 1000, 3)))
	// An even count: the median is the lower middle sample, rank n/2.
	assert.Equal(t, int64(1), StallsOf([]int64{1, 2, 20, 21}), "median 2: only 21 is above 20")
}
