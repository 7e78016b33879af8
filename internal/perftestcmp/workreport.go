package perftestcmp

import (
	"fmt"
	"io"
	"math"

	"github.com/rdmabench/rdmabench/internal/sticky"
	"github.com/rdmabench/rdmabench/internal/work"
)

// PrintWork writes the work table after Print's: per tool and size, user
// and kernel instructions per operation of perftest and ours by one
// method, their ratio, and ours from our markers with the method's
// deviation from it; then one work verdict per tool and size. why says
// why there are no work figures when works is empty.
func PrintWork(w io.Writer, works []WorkResult, why error, iters int) error {
	p := &sticky.Printer{W: w}
	if len(works) == 0 {
		if why != nil {
			p.Printf("\nwork: not counted: %v\n", why)
		}
		return p.Err
	}
	p.Printf("\nwork: guest instructions per operation (a round trip, or a one-sided operation), rxevm -insns; the verdict where time is emulation\n")
	p.Printf("both sides by one method: each program ran for %d and %d operations under rxevm's preload library (its polls that found nothing left out,\n", iters, 2*iters)
	p.Printf("as our loops leave theirs; a WRITE ping-pong's spin on its buffer too), work = difference of the two runs / %d, less the library's own\n", iters)
	p.Printf("%d instructions per call; kernel = kernel work (kernel-work-insns/op: on every vCPU, time's part left out; - where not counted); docs/comparing.md\n", work.PreloadCallInsns)
	p.Printf("ratio = ours/perftest: user ours by the method, else by the markers; kernel work ours by the markers, else by the method (the method's\n")
	p.Printf("windows on our Go process also hold its runtime's page faults); markers = ours from our loops' own markers (the rounds' runs);\n")
	p.Printf("check = ours by the method (a build without markers, -work-bench) / by the markers - 1\n")
	p.Printf("  %-10s %5s | %-9s %9s %9s %7s %9s %7s | %-9s %9s %9s %7s %9s %7s\n",
		"tool", "size", "user", "perftest", "ours", "ratio", "markers", "check", "kern-work", "perftest", "ours", "ratio", "markers", "check")
	for _, r := range works {
		if r.Err != nil {
			p.Printf("  %-10s %5d | error: %v\n", r.Tool.name, r.Size, r.Err)
			continue
		}
		p.Printf("  %-10s %5d | %-9s %9.1f %9s %7s %9s %7s | %-9s %9s %9s %7s %9s %7s\n", r.Tool.name, r.Size,
			"", r.Perftest.User, markerFigure(r.HasOurs, r.Ours.User, "%.1f"), workRatio(r.oursUser(), r.Perftest.User),
			markerFigure(r.HasMarkers, r.Markers.User, "%.1f"), check(r.HasOurs && r.HasMarkers, r.Ours.User, r.Markers.User),
			"", markerFigure(true, comparedKernel(r.Perftest), "%.0f"), markerFigure(r.HasOurs, comparedKernel(r.Ours), "%.0f"), workRatio(r.oursKernel(), comparedKernel(r.Perftest)),
			markerFigure(r.HasMarkers, comparedKernel(r.Markers), "%.0f"), check(r.HasOurs && r.HasMarkers, comparedKernel(r.Ours), comparedKernel(r.Markers)))
	}
	for _, r := range works {
		if r.Err != nil {
			p.Printf("verdict work %s size %d: no figures (%v)\n", r.Tool.name, r.Size, r.Err)
			continue
		}
		p.Printf("verdict work %s size %d: ours costs %s perftest's user instructions and %s its kernel work per operation\n",
			r.Tool.name, r.Size, workRatio(r.oursUser(), r.Perftest.User), workRatio(r.oursKernel(), comparedKernel(r.Perftest)))
	}
	return p.Err
}

// workRatio formats ours/perftest; "-" when perftest's figure is not
// positive or either is missing (NaN).
func workRatio(ours, pt float64) string {
	if !(pt > 0) || math.IsNaN(ours) {
		return "-"
	}
	return fmt.Sprintf("%.3fx", ours/pt)
}

// markerFigure formats v when there is one, else "-".
func markerFigure(ok bool, v float64, format string) string {
	if !ok || math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// check formats how far the method's figure is from the markers'.
func check(ok bool, method, markers float64) string {
	if !ok || !(markers > 0) || math.IsNaN(method) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(method/markers-1))
}
