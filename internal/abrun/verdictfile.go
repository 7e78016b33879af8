package abrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/rdmabench/rdmabench/internal/abtest"
)

// VerdictFileName is the verdict for machines, written beside old.txt and
// new.txt: every judged benchmark and metric with its estimate, interval,
// p-value, level, decision and the way it was judged.
const VerdictFileName = "verdict.json"

// verdictVersion is the file's format; a reader rejects another.
const verdictVersion = 1

// A VerdictFile is the gate's decisions as verdict.json holds them.
type VerdictFile struct {
	Version   int             `json:"version"`
	Status    int             `json:"status"`  // the exit status the verdict stands for (abtest's table)
	Outcome   string          `json:"outcome"` // pass, regressed, failed or undecided
	Alpha     float64         `json:"alpha"`
	Threshold float64         `json:"threshold"`
	Metrics   []MetricVerdict `json:"metrics"`
	// OneSided names the benchmarks and metrics one side lacks: not
	// compared, and not counted in the verdict.
	OneSided []OneSided `json:"one_sided,omitempty"`
}

// A MetricVerdict is one benchmark's metric, judged.
type MetricVerdict struct {
	Benchmark string `json:"benchmark"` // as the report names it: "Benchmark" and benchstat's name, without the -GOMAXPROCS suffix where judged by turns (a turn's label lacks it)
	Unit      string `json:"unit"`
	JudgedBy  Basis  `json:"judged_by"`
	N         int    `json:"n"` // pairs (paired) or the smaller side's runs (U test)
	// Estimate is new/old: the paired test's typical ratio, or the ratio
	// of the medians for the U test. Lo and Hi bound it (paired only);
	// null where no finite value exists.
	Estimate *float64 `json:"estimate"`
	Lo       *float64 `json:"lo"`
	Hi       *float64 `json:"hi"`
	P        *float64 `json:"p"`
	Level    float64  `json:"level"`    // the level p was held to; the work rule: the unit's threshold
	Decision string   `json:"decision"` // different, same, no difference found, undecided
	Decided  bool     `json:"decided"`
	// Regressed: worse by more than the threshold, significantly.
	Regressed bool `json:"regressed"`
}

// A OneSided is a metric only one side has.
type OneSided struct {
	Benchmark string `json:"benchmark"`
	Unit      string `json:"unit"`
	Side      string `json:"side"` // the side that has it
}

// finite returns &x, or nil for a value JSON cannot hold.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// addPaired adds a paired verdict's findings.
func (vf *VerdictFile) addPaired(fs []abtest.PairedFinding, ms []pairedMetric) {
	if vf == nil {
		return
	}
	for i, f := range fs {
		bench, unit := f.Name, ""
		if j := strings.LastIndexByte(f.Name, ' '); j >= 0 {
			bench, unit = f.Name[:j], f.Name[j+1:]
		}
		r := f.Result
		vf.Metrics = append(vf.Metrics, MetricVerdict{Benchmark: bench, Unit: unit, JudgedBy: ms[i].basis, N: r.N,
			Estimate: finite(r.Ratio), Lo: finite(r.Lo), Hi: finite(r.Hi), P: finite(r.P), Level: f.Alpha,
			Decision: f.Decision.String(), Decided: f.Decision != abtest.Undecided, Regressed: f.Regressed})
	}
}

// addUTest adds the U test's findings.
func (vf *VerdictFile) addUTest(v abtest.Verdict) {
	if vf == nil {
		return
	}
	for _, f := range v.Findings {
		d := "undecided"
		switch {
		case f.Significant:
			d = "different"
		case f.Judged:
			d = "no difference found"
		}
		vf.Metrics = append(vf.Metrics, MetricVerdict{Benchmark: "Benchmark" + f.Key.Name, Unit: f.Key.Unit, JudgedBy: ByUTest,
			N: min(f.Cmp.N1, f.Cmp.N2), Estimate: finite(1 + f.Change), P: finite(f.Cmp.P), Level: f.Alpha,
			Decision: d, Decided: f.Judged, Regressed: f.Regressed})
	}
}

// addOneSided adds the metrics of units only one side has.
func (vf *VerdictFile) addOneSided(old, new *abtest.Results, units []string) {
	if vf == nil {
		return
	}
	_, missing := abtest.KeysFor(old, new, units)
	for _, k := range missing {
		side := abtest.New
		if _, ok := old.Values[k]; ok {
			side = abtest.Old
		}
		vf.OneSided = append(vf.OneSided, OneSided{Benchmark: "Benchmark" + k.Name, Unit: k.Unit, Side: side.String()})
	}
}

// settle records the exit status the verdict stands for.
func (vf *VerdictFile) settle(status int) {
	if vf == nil {
		return
	}
	vf.Status = status
	vf.Outcome = map[int]string{abtest.ExitPass: "pass", abtest.ExitRegressed: "regressed", abtest.ExitUndecided: "undecided"}[status]
	if vf.Outcome == "" {
		vf.Outcome = "failed"
	}
}

// newVerdictFile starts a verdict under rule.
func newVerdictFile(rule abtest.GateRule) *VerdictFile {
	return &VerdictFile{Version: verdictVersion, Alpha: rule.Alpha, Threshold: rule.Threshold, Metrics: []MetricVerdict{}}
}

// WriteVerdict writes vf as indented JSON to name.
func WriteVerdict(name string, vf *VerdictFile) error {
	b, err := json.MarshalIndent(vf, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(name, append(b, '\n'), 0o644)
}

// maxVerdictBytes bounds what ReadVerdict reads: a verdict of ten thousand
// metrics is about 4 MB.
const maxVerdictBytes = 64 << 20

// ErrBadVerdict means a verdict file is not one this version reads.
var ErrBadVerdict = errors.New("not a verdict file")

// ReadVerdict reads a verdict.json, strictly: unknown fields, another
// version, trailing data or more than 64 MiB are errors.
func ReadVerdict(r io.Reader) (*VerdictFile, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxVerdictBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxVerdictBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrBadVerdict, maxVerdictBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var vf VerdictFile
	if err := dec.Decode(&vf); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadVerdict, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the verdict", ErrBadVerdict)
	}
	if vf.Version != verdictVersion {
		return nil, fmt.Errorf("%w: version %d, this rdmaab reads %d", ErrBadVerdict, vf.Version, verdictVersion)
	}
	// An empty list and an absent one mean the same: read both as absent,
	// so that a verdict written back reads as the same verdict.
	if len(vf.OneSided) == 0 {
		vf.OneSided = nil
	}
	return &vf, nil
}
