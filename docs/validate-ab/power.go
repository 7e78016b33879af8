//go:build ignore

// power.go: how large a shift benchstat's U test finds in 10 interleaved
// pairs, resampled from measured A/A runs (make validate-ab's aa step).
// It pools every run's value of one metric at one size, draws TRIALS
// comparisons of PAIRS old and PAIRS new runs (without replacement within
// a comparison), adds a fixed shift to the new side, and counts the
// comparisons benchmath's Mann-Whitney U test finds significant at 0.05.
//
//	go run docs/validate-ab/power.go -unit p50-ns -size 2 out/validate-ab/aa/aa*/{old,new}.txt
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/rdmabench/rdmabench/internal/abtest"
)

func main() {
	unit := flag.String("unit", "p50-ns", "metric")
	size := flag.String("size", "2", "message size of the benchmark")
	pairs := flag.Int("pairs", 10, "runs a side per comparison")
	trials := flag.Int("trials", 1000, "comparisons per shift")
	flag.Parse()
	rs := abtest.NewResults() // the reader rdmaab's gate uses
	for _, name := range flag.Args() {
		f, err := os.Open(name)
		if err != nil {
			panic(err)
		}
		if err := rs.Read(f, name); err != nil {
			panic(err)
		}
		f.Close()
	}
	var pool []float64
	for _, k := range rs.Keys {
		if k.Unit == *unit && strings.Contains(k.Name, "size="+*size+"-") {
			pool = append(pool, rs.Values[k]...)
		}
	}
	sort.Float64s(pool)
	med := pool[len(pool)/2]
	fmt.Printf("%s at %s B: %d runs pooled, median %.0f\n", *unit, *size, len(pool), med)
	rng := rand.New(rand.NewPCG(1, 2))
	th := benchmath.Thresholds{CompareAlpha: 0.05}
	for _, pct := range []float64{0, 1, 2, 3, 5, 10, 15, 20, 30} {
		shift := med * pct / 100
		found := 0
		for t := 0; t < *trials; t++ {
			idx := rng.Perm(len(pool))
			old := make([]float64, *pairs)
			new := make([]float64, *pairs)
			for i := 0; i < *pairs; i++ {
				old[i] = pool[idx[i]]
				new[i] = pool[idx[*pairs+i]] + shift
			}
			c := benchmath.AssumeNothing.Compare(benchmath.NewSample(old, &th), benchmath.NewSample(new, &th))
			if c.P < 0.05 {
				found++
			}
		}
		fmt.Printf("  +%4.1f%%: found in %5.1f%% of %d comparisons of %d pairs\n", pct, 100*float64(found)/float64(*trials), *trials, *pairs)
	}
}
