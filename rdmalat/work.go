package rdmalat

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sync"

	"github.com/rdmabench/rdmabench/internal/work"
)

// openCounter opens the instruction counter for one Run; tests replace it
// with a fake source.
var openCounter = work.Open

// workMeter counts the instructions of one Run's measured round trips:
// from just after the warm-up (Start) to just after the responder stopped
// (Close), so that both sides' last operations are in, divided by the
// round trips run in between.
type workMeter struct {
	c    work.Counter
	ran0 uint64
	ops  uint64 // round trips counted, once finished
	err  error  // why there are no work metrics
}

// startWork opens the counter and resets it; call it on the measuring
// goroutine after the Run started (its thread is pinned then).
func startWork(r *Run) *workMeter {
	m := &workMeter{}
	if m.c, m.err = openCounter(); m.err != nil {
		return m
	}
	m.ran0 = r.RoundTrips()
	if m.err = m.c.Reset(); m.err != nil {
		m.c.Close()
		m.c = nil
	}
	return m
}

// finish reads the counter after the Run closed and returns the work per
// round trip.
func (m *workMeter) finish(r *Run) ([]work.Metric, error) {
	if m.c == nil {
		return nil, m.err
	}
	defer m.c.Close()
	n, err := m.c.Read()
	if err != nil {
		return nil, err
	}
	m.ops = r.RoundTrips() - m.ran0
	return n.PerOp(m.ops, m.c.Source()), nil
}

// profile attributes the work finish read to functions: the plugin's
// profile, written by the same report (work.ReadProfile).
func (m *workMeter) profile() (work.Profile, error) {
	return work.ReadProfile(os.Getenv(work.EnvPlugin), m.ops)
}

// ProfileArtifact is the file, in a benchmark's artifact directory (go
// test -artifacts), that holds its work per function (rdmawork diff
// compares two).
const ProfileArtifact = "work-profile.txt"

// artifactDirer is testing.B's ArtifactDir (Go 1.26).
type artifactDirer interface{ ArtifactDir() string }

// writeProfile writes m's work per function into b's artifact directory
// when go test runs with -artifacts and the plugin counted.
func writeProfile(b B, m *workMeter) error {
	a, ok := b.(artifactDirer)
	if f := flag.Lookup("test.artifacts"); !ok || f == nil || f.Value.String() != "true" ||
		m.c == nil || m.c.Source() != "rxevm-plugin" {
		return nil
	}
	p, err := m.profile()
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(a.ArtifactDir(), ProfileArtifact))
	if err != nil {
		return err
	}
	if err := work.WriteProfile(f, p); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// noWork holds the reasons already logged for missing work metrics.
var noWork sync.Map

// reportWork adds the work metrics to b's result line, or logs once per
// reason why there are none (absent metrics are how an older result file
// reads too, so benchstat compares either).
func reportWork(b B, m *workMeter, r *Run) {
	metrics, err := m.finish(r)
	if err != nil {
		if _, seen := noWork.LoadOrStore(err.Error(), true); !seen {
			how := ""
			if errors.Is(err, work.ErrUnavailable) {
				how = " (in the VM: rxevm -insns; see docs/work.md)"
			}
			b.Logf("no %s or %s metrics: %v%s", work.UnitUser, work.UnitKernel, err, how)
		}
		return
	}
	for _, x := range metrics {
		b.ReportMetric(x.Value, x.Unit)
	}
	if err := writeProfile(b, m); err != nil {
		if _, seen := noWork.LoadOrStore("profile: "+err.Error(), true); !seen {
			b.Logf("no %s artifact: %v", ProfileArtifact, err)
		}
	}
}
