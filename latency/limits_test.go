package latency

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLimits(t *testing.T) {
	l, err := ParseLimits("RDMABENCH_MAX", " p99=20us, P50=5µs ,max=1.5ms,p99.9=100us,mean=4us,min=1ns")
	require.NoError(t, err)
	assert.Equal(t, []Limit{
		{"p99", 20e3}, {"p50", 5e3}, {"max", 1.5e6}, {"p99.9", 100e3}, {"mean", 4e3}, {"min", 1},
	}, l)
	assert.Equal(t, "p99=20µs", l[0].String())

	l, err = ParseLimits("RDMABENCH_MAX", "")
	require.NoError(t, err)
	assert.Nil(t, l)

	const help = " (example: RDMABENCH_MAX=p99=20us,p50=5us; statistics: min, mean, max, p50, p90, p99, p99.9, p99.99; durations as Go writes them: 800ns, 20us, 1.5ms)"
	for in, want := range map[string]string{
		"p99":              `"p99" is not stat=duration`,
		"p98=1us":          `"p98" is not a statistic a run reports`,
		"p99=20":           `"20" is not a positive duration`,
		"p99=-1us":         `"-1us" is not a positive duration`,
		"p99=1us,p99=2us":  `p99 is given twice`,
		"p99=1us,,p50=1us": `"" is not stat=duration`,
		"stddev=1us":       `"stddev" is not a statistic a run reports`,
	} {
		_, err := ParseLimits("RDMABENCH_MAX", in)
		assert.EqualError(t, err, `RDMABENCH_MAX="`+in+`": `+want+help, in)
	}
}

func TestCheckLimits(t *testing.T) {
	// 1000 samples of 1..1000 us, one-way: p50 500 us, p99 990 us, max
	// 1000 us, mean 500.5 us (within the histogram's precision).
	r := NewRecorder(false)
	for i := 1; i <= 1000; i++ {
		r.Record(int64(i) * 1000)
	}
	s := r.Summary()
	require.NoError(t, CheckLimits(s, nil))
	require.NoError(t, CheckLimits(s, []Limit{{"p50", 600e3}, {"max", 1001e3}, {"mean", 501e3}, {"min", 1e3}}))

	err := CheckLimits(s, []Limit{{"p50", 400e3}, {"p99", 1e6}, {"max", 999e3}})
	require.ErrorIs(t, err, ErrLimit)
	assert.Contains(t, err.Error(), "p50 500")
	assert.Contains(t, err.Error(), "> limit 400µs")
	assert.Contains(t, err.Error(), "max 1ms > limit 999µs")
	assert.NotContains(t, err.Error(), "p99 ", "p99 is within its limit")

	// p99.99 at 1000 samples cannot be told apart from the maximum: the
	// maximum is what is checked.
	assert.Error(t, CheckLimits(s, []Limit{{"p99.99", 999.5e3}}))
	assert.NoError(t, CheckLimits(s, []Limit{{"p99.99", 1000.5e3}}))

	err = CheckLimits(NewRecorder(true).Summary(), []Limit{{"p99", time.Hour.Seconds() * 1e9}})
	assert.ErrorIs(t, err, ErrLimit, "no samples: nothing shows the run within the limit")
}

// TestLimitUnit: each statistic a limit names maps to the unit Report
// writes it under, and FormatLimits writes what ParseLimits reads back.
func TestLimitUnit(t *testing.T) {
	limits, err := ParseLimits("RDMABENCH_MAX", "mean=1us,min=2us,max=3ms,p50=4us,p99.9=5us")
	require.NoError(t, err)
	var units []string
	for _, l := range limits {
		units = append(units, l.Unit())
	}
	assert.Equal(t, []string{UnitMean, UnitMin, UnitMax, "p50-ns", "p99.9-ns"}, units)
	back, err := ParseLimits("RDMABENCH_MAX", FormatLimits(limits))
	require.NoError(t, err)
	assert.Equal(t, limits, back)
	assert.Equal(t, "mean=1µs,min=2µs,max=3ms,p50=4µs,p99.9=5µs", FormatLimits(limits))
}
