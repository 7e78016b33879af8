package latency_test

import (
	"fmt"

	"github.com/rdmabench/rdmabench/latency"
)

// Recording and reporting need no device: any round-trip times go in, the
// one-way statistics come out.
func ExampleRecorder() {
	rec := latency.NewRecorder(true)
	for _, rtt := range []int64{2000, 2200, 2400, 2600, 9000} { // ns
		rec.Record(rtt)
	}
	s := rec.Summary()
	p50, _ := s.Percentile(500000)
	fmt.Printf("n=%d min=%.0f p50=%.0f max=%.0f mean=%.0f ns one-way\n", s.Count, s.Min, p50, s.Max, s.Mean)
	// Output: n=5 min=1000 p50=1200 max=4500 mean=1820 ns one-way
}
