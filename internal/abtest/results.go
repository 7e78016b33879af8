// Package abtest holds the statistics of an A/B comparison of two builds
// of the same benchmarks: the interleaving order of their runs, the results
// read back from Go's benchmark format, the stop rule of a repeated
// comparison and the regression gate. It does no I/O of its own beyond
// reading what it is given, and imports neither cgo nor testing.
//
// The two builds are "old" and "new". Their runs alternate, one -count
// repetition per run, in pairs whose order alternates too (old,new then
// new,old ...), so that slow drift of the machine (emulation, load, a
// warming cache) falls on both sides equally and per-pair ratios cancel it.
package abtest

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/rdmabench/rdmabench/internal/benchfile"
)

// A Side is one of the two builds compared.
type Side int

const (
	Old Side = iota
	New
)

func (s Side) String() string {
	if s == Old {
		return "old"
	}
	return "new"
}

// Order returns the sides of pair i (0-based) in the order they run: old
// first in even pairs, new first in odd ones.
func Order(pair int) [2]Side {
	if pair%2 == 0 {
		return [2]Side{Old, New}
	}
	return [2]Side{New, Old}
}

// A Key names one measured quantity: a benchmark's full name as benchfmt
// reads it (without "Benchmark", with its -GOMAXPROCS suffix) and a unit
// as the benchmark reported it ("p50-ns", not benchstat's "p50-sec").
type Key struct {
	Name, Unit string
}

func (k Key) String() string { return "Benchmark" + k.Name + " " + k.Unit }

// Results holds every value read for each key, in the order read, and the
// unit metadata the input declared.
type Results struct {
	Values map[Key][]float64
	Units  benchfmt.UnitMetadataMap
	// Keys lists the keys in the order first seen, for stable output.
	Keys []Key
}

// NewResults returns an empty Results.
func NewResults() *Results {
	return &Results{Values: map[Key][]float64{}, Units: benchfmt.UnitMetadataMap{}}
}

// Read adds the results in r (benchmark output, config lines and all) and
// returns a *benchfmt.SyntaxError for a malformed result line.
func (rs *Results) Read(r io.Reader, fileName string) error {
	info, err := benchfile.Read(r, fileName, benchfile.Fail, func(rec *benchfmt.Result) error {
		for _, v := range rec.Values {
			unit, val := v.Unit, v.Value
			if v.OrigUnit != "" {
				// benchfmt tidies "p50-ns" into "p50-sec" but
				// not a zero value; the original unit is stable.
				unit, val = v.OrigUnit, v.OrigValue
			}
			k := Key{Name: string(rec.Name), Unit: unit}
			if _, seen := rs.Values[k]; !seen {
				rs.Keys = append(rs.Keys, k)
			}
			rs.Values[k] = append(rs.Values[k], val)
		}
		return nil
	})
	maps.Copy(rs.Units, info.Units)
	return err
}

// ReadResults reads one side's whole output.
func ReadResults(r io.Reader, fileName string) (*Results, error) {
	rs := NewResults()
	if err := rs.Read(r, fileName); err != nil {
		return nil, err
	}
	return rs, nil
}

// MatchUnit reports whether a benchmark's unit is the one asked for, in
// either spelling: "p50-ns" matches "p50-ns" and "p50-sec"; "ns/op" and
// "sec/op" match each other.
func MatchUnit(unit, want string) bool {
	if unit == want {
		return true
	}
	_, a := benchunit.Tidy(1, unit)
	_, b := benchunit.Tidy(1, want)
	return a == b
}

// LowerIsBetter reports whether a smaller value of unit is an
// improvement: what the input's unit metadata says ("Unit x better=higher"),
// else higher is better only for rates (a unit ending in "/s").
func (rs *Results) LowerIsBetter(unit string) bool {
	if rs != nil {
		if b := rs.Units.Get(unit, "better"); b != nil {
			return b.Value != "higher"
		}
	}
	return !strings.HasSuffix(unit, "/s")
}

// KeysFor returns the keys of both old and new whose unit matches one of
// units, ordered by unit (in the order given) then by first appearance in
// old. A key present on one side only is left out and reported in missing.
func KeysFor(old, new *Results, units []string) (keys []Key, missing []Key) {
	for _, u := range units {
		for _, k := range old.Keys {
			if !MatchUnit(k.Unit, u) {
				continue
			}
			if _, ok := new.Values[k]; ok {
				keys = append(keys, k)
			} else {
				missing = append(missing, k)
			}
		}
		for _, k := range new.Keys {
			if _, ok := old.Values[k]; !ok && MatchUnit(k.Unit, u) {
				missing = append(missing, k)
			}
		}
	}
	return slices.Compact(keys), missing
}

// ParseUnits reads a comma-separated list of units ("p50-ns,p99-ns").
func ParseUnits(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.ContainsAny(f, " \t") {
			return nil, fmt.Errorf("%q is not a unit (like p50-ns or ns/op)", f)
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no units given: want a list like p50-ns,p99-ns")
	}
	return out, nil
}
