package latplot

import (
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
)

func TestBucketWidth(t *testing.T) {
	h := hdrhistogram.New(1, 100e9, 3)
	// 3 digits: 2048 sub-buckets, exact below 2048, width 8 at 10-16 us.
	assert.Equal(t, 1.0, bucketWidth(h, 1000))
	assert.Equal(t, 1.0, bucketWidth(h, 2047))
	assert.Equal(t, 2.0, bucketWidth(h, 2048))
	assert.Equal(t, 8.0, bucketWidth(h, 11660))
	// The claim checked against the histogram itself.
	for _, v := range []int64{3000, 11660, 1 << 20} {
		w := int64(bucketWidth(h, v))
		base := v &^ (w - 1)
		assert.True(t, h.ValuesAreEquivalent(base, base+w-1), "v=%d w=%d", v, w)
		assert.False(t, h.ValuesAreEquivalent(base, base+w), "v=%d w=%d", v, w)
	}
}

func TestTicks(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks125{}).Ticks(8, 300) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"10us", "20us", "50us", "100us", "200us"}, labels)
	labels = nil
	for _, tk := range (logTicks125{}).Ticks(0.5, 3e6) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"1us", "10us", "100us", "1ms", "10ms", "100ms", "1s"}, labels)
	assert.Equal(t, "500ns", formatUS(0.5))
}
