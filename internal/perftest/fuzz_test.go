package perftest

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseLatency: any output of a latency test is refused with an error
// or gives rows of sizes and iterations from 1 and finite, non-negative
// values, and no panic.
func FuzzParseLatency(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("---\nRDMA_Write Latency Test\n---\n #bytes #iterations t_min[usec] t_max[usec]\n 2 1000 1.5 Infinity\n---\n")
	f.Add("---\nRDMA_Write Latency Test\n---\n #bytes #iterations t_min[usec]\n -2 -1000 -1.5\n---\n")
	f.Fuzz(func(t *testing.T, in string) {
		rep, err := ParseLatency(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, row := range rep.Rows {
			if row.Bytes < 1 || row.Iterations < 1 {
				t.Fatalf("row of %d bytes, %d iterations", row.Bytes, row.Iterations)
			}
			for s, v := range row.Values {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("%s = %g", s, v)
				}
			}
		}
		for _, v := range rep.Samples {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("sample %g", v)
			}
		}
	})
}
