package fleet

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const us = 1e-6

func m(src, dst string, v float64) Measure {
	return Measure{Pair: Pair{src, dst}, Round: 1, Value: v * us}
}

func TestAnalyseSlowNode(t *testing.T) {
	// n4 is slow in all three of its pairs.
	// Sorted: 10 11 12 29 30 31; median (12+29)/2 = 20.5;
	// |v-20.5| = 10.5 9.5 8.5 8.5 9.5 10.5, median 9.5 = MAD;
	// limits: 2.1 x 10 = 21 (min), 20.5 + 6 x 9.5 = 77.5 (mad).
	a := Analyse([]Measure{
		m("n1", "n2", 10), m("n1", "n3", 11), m("n2", "n3", 12),
		m("n1", "n4", 30), m("n4", "n2", 31), m("n3", "n4", 29),
	}, DefaultThresholds)
	assert.Equal(t, 6, a.Measured)
	assert.InDelta(t, 10*us, a.Min, 1e-12)
	assert.InDelta(t, 20.5*us, a.Median, 1e-12)
	assert.InDelta(t, 9.5*us, a.MAD, 1e-12)
	assert.InDelta(t, 21*us, a.MinLimit, 1e-12)
	assert.InDelta(t, 77.5*us, a.MADLimit, 1e-12)
	require.Len(t, a.Flagged, 3)
	assert.Equal(t, Pair{"n4", "n2"}, a.Flagged[0].Pair, "slowest first")
	for _, f := range a.Flagged {
		assert.Equal(t, []string{"min"}, f.Rules)
	}
	assert.Equal(t, []Suspect{{"n4", 3, 3}}, a.Suspects, "n1..n3 are in 1 bad pair of 3")
	assert.Len(t, a.BadPairs(), 3)

	var b strings.Builder
	a.Format(&b)
	assert.Contains(t, b.String(), "node n4: in 3 of its 3 pairs flagged or failed\n")
	assert.Contains(t, b.String(), "flagged: round 1 n4 n2 31.00us = 3.10x min (rules min)\n")
}

func TestAnalyseSlowLink(t *testing.T) {
	// Sorted: 9.9 10 10 10.1 10.1 10.2 10.3 12; median 10.1;
	// |v-10.1| sorted: 0 0 .1 .1 .1 .2 .2 1.9, MAD (.1+.1)/2 = 0.1;
	// mad limit 10.1 + max(6 x 0.1, 5% x 10.1 = 0.505) = 10.7, so 12 is
	// flagged by it alone (2.1 x 9.9 = 20.79). One link: no suspect.
	a := Analyse([]Measure{
		m("a", "b", 10), m("c", "d", 10.2), m("e", "f", 10.1), m("g", "h", 9.9),
		m("a", "c", 10), m("b", "d", 10.3), m("e", "g", 10.1), m("f", "h", 12),
	}, DefaultThresholds)
	assert.InDelta(t, 10.1*us, a.Median, 1e-12)
	assert.InDelta(t, 0.1*us, a.MAD, 1e-12)
	assert.InDelta(t, 10.7*us, a.MADLimit, 1e-12)
	require.Len(t, a.Flagged, 1)
	assert.Equal(t, Flag{m("f", "h", 12), []string{"mad"}}, a.Flagged[0])
	assert.Empty(t, a.Suspects)
	var b strings.Builder
	a.Format(&b)
	assert.Contains(t, b.String(), "no node is in most of its bad pairs")
}

func TestAnalyseUniformAndFailed(t *testing.T) {
	// MAD 0: the 5% margin keeps 10.01 (within 0.5 of the median 10) from
	// being flagged. n3's two failed pairs make it a suspect: 2 of 3.
	fail := func(src, dst string) Measure {
		return Measure{Pair: Pair{src, dst}, Round: 2, Failed: "timed out after 2m0s"}
	}
	a := Analyse([]Measure{
		m("n1", "n2", 10), m("n1", "n4", 10), m("n2", "n4", 10.01), m("n3", "n4", 10),
		fail("n1", "n3"), fail("n3", "n2"),
	}, DefaultThresholds)
	assert.Equal(t, 0.0, a.MAD)
	assert.Empty(t, a.Flagged)
	assert.Len(t, a.Failed, 2)
	assert.Equal(t, []Suspect{{"n3", 2, 3}}, a.Suspects)
	var b strings.Builder
	a.Format(&b)
	assert.Contains(t, b.String(), "failed: round 2 n1 n3: timed out after 2m0s\n")

	b.Reset()
	Analyse([]Measure{m("a", "b", 10), m("c", "d", 10)}, DefaultThresholds).Format(&b)
	assert.Contains(t, b.String(), "no outliers\n")
	b.Reset()
	Analyse(nil, DefaultThresholds).Format(&b)
	assert.Equal(t, "pairs measured: 0, failed: 0\nno outliers\n", b.String())
}

// TestAnalyseNoLatency: a NaN, infinite or negative figure is a failed
// pair; the min rule and the report never print NaN.
func TestAnalyseNoLatency(t *testing.T) {
	nan := m("n1", "n4", 0)
	nan.Value = math.NaN()
	inf := m("n2", "n4", 0)
	inf.Value = math.Inf(1)
	a := Analyse([]Measure{nan, m("n1", "n2", 10), m("n1", "n3", 11), inf, m("n3", "n2", -1)}, DefaultThresholds)
	assert.Equal(t, 2, a.Measured)
	assert.InDelta(t, 10*us, a.Min, 1e-12)
	assert.Equal(t, Pair{"n1", "n2"}, a.Fastest.Pair)
	require.Len(t, a.Failed, 3)
	assert.Equal(t, "its figure is no latency (not finite, or negative)", a.Failed[0].Failed)
	var b strings.Builder
	a.Format(&b)
	assert.NotContains(t, b.String(), "NaN")
	assert.NotContains(t, b.String(), "Inf")
	assert.Contains(t, b.String(), "fastest: n1 n2 10.00us")
}
