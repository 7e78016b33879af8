package summary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRead: any results file is refused or summarised, with no NaN and no
// negative count in the table; the table's size follows the results', and
// no panic.
func FuzzRead(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "bench.txt")); err == nil {
		f.Add(string(b))
	}
	f.Add("rdma-device: rxe0\nBenchmarkRDMAWrite/size=2 2000 15000 ns/op 10000 min-ns 11000 p50-ns 1 stalls\n")
	f.Add("# warning (vm): slow\nBenchmarkRDMAWrite/size=2 2000 NaN ns/op +Inf p50-ns\nBenchmarkRDMAWrite/size=2 -5 1 ns/op\n")
	f.Fuzz(func(t *testing.T, in string) {
		file, err := Read(strings.NewReader(in), "bench.txt")
		if err != nil {
			return
		}
		var b strings.Builder
		if err := Summarize(file, DefaultOptions).Format(&b); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "NaN") {
			t.Fatalf("NaN in the summary:\n%s", b.String())
		}
		if strings.Contains(b.String(), " x -") {
			t.Fatalf("a negative count in the summary:\n%s", b.String())
		}
	})
}
