package latency

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A Limit is an absolute bound on one statistic of a run, such as
// "p99=20us": a run whose statistic is above it fails (perftest has no
// such check; ClusterKit and NVIDIA's tools call it a tolerance). It is
// compared with the figure the run reports: one-way for the ping-pong
// operations, whole for READ and atomics (Summary.OneWay).
type Limit struct {
	Stat string  // "min", "mean", "max" or a percentile such as "p99" or "p99.9"
	Max  float64 // nanoseconds
}

func (l Limit) String() string {
	return l.Stat + "=" + time.Duration(l.Max).String()
}

// Unit returns the metric unit Report writes l's statistic under: "ns/op"
// for the mean, "p99-ns" for p99. A reader of result files (rdmafleet
// report -max) finds the figure a limit bounds through it.
func (l Limit) Unit() string {
	switch l.Stat {
	case "mean":
		return UnitMean
	case "min":
		return UnitMin
	case "max":
		return UnitMax
	}
	if p, ok := percentileOf(l.Stat); ok {
		return p.Unit()
	}
	return l.Stat + "-ns" // ParseLimits takes no other statistic
}

// FormatLimits writes limits as ParseLimits reads them, "p99=20µs,max=1ms".
func FormatLimits(limits []Limit) string {
	s := make([]string, len(limits))
	for i, l := range limits {
		s[i] = l.String()
	}
	return strings.Join(s, ",")
}

// ErrLimit is matched (errors.Is) by CheckLimits's error.
var ErrLimit = errors.New("latency: over an absolute limit")

// limitStats are the statistics a Limit may name, besides the percentiles.
var limitStats = []string{"min", "mean", "max"}

// percentileOf returns the PPM of a percentile name from Percentiles
// ("p50" .. "p99.99").
func percentileOf(stat string) (PPM, bool) {
	for _, p := range Percentiles {
		if "p"+strings.TrimSuffix(strconv.FormatFloat(float64(p)/1e4, 'f', -1, 64), ".0") == stat {
			return p, true
		}
	}
	return 0, false
}

// statNames lists what a Limit may name, for error messages.
func statNames() string {
	names := append([]string{}, limitStats...)
	for _, p := range Percentiles {
		names = append(names, "p"+strconv.FormatFloat(float64(p)/1e4, 'f', -1, 64))
	}
	return strings.Join(names, ", ")
}

// ParseLimits parses limits given as name (a variable or flag, named in
// the error): comma-separated stat=duration pairs, such as
// "p99=20us,p50=5us,max=1ms", each statistic once; empty means none.
func ParseLimits(name, v string) ([]Limit, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s=%q: %s (example: %s=p99=20us,p50=5us; statistics: %s; durations as Go writes them: 800ns, 20us, 1.5ms)",
			name, v, fmt.Sprintf(format, args...), name, statNames())
	}
	var out []Limit
	for _, f := range strings.Split(v, ",") {
		stat, d, ok := strings.Cut(strings.TrimSpace(f), "=")
		stat = strings.ToLower(strings.TrimSpace(stat))
		if !ok {
			return nil, bad("%q is not stat=duration", f)
		}
		if _, isP := percentileOf(stat); !isP && !containsString(limitStats, stat) {
			return nil, bad("%q is not a statistic a run reports", stat)
		}
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil || dur <= 0 {
			return nil, bad("%q is not a positive duration", strings.TrimSpace(d))
		}
		for _, l := range out {
			if l.Stat == stat {
				return nil, bad("%s is given twice", stat)
			}
		}
		out = append(out, Limit{Stat: stat, Max: float64(dur)})
	}
	return out, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// value returns the statistic stat of s.
func (s Summary) value(stat string) (float64, bool) {
	switch stat {
	case "min":
		return s.Min, true
	case "mean":
		return s.Mean, true
	case "max":
		return s.Max, true
	}
	p, ok := percentileOf(stat)
	if !ok {
		return 0, false
	}
	for _, q := range s.Percentiles {
		if q.P == p {
			// A percentile with too few samples to tell it apart from
			// the maximum is the maximum: never below the real one.
			if !q.OK {
				return s.Max, true
			}
			return q.Value, true
		}
	}
	return 0, false
}

// CheckLimits returns an error matching ErrLimit that names every limit
// s is above, with the measured figure, or nil. A run with no samples
// fails every limit: nothing shows it within them.
func CheckLimits(s Summary, limits []Limit) error {
	var over []string
	for _, l := range limits {
		v, ok := s.value(l.Stat)
		switch {
		case s.Count == 0:
			over = append(over, fmt.Sprintf("%s: no samples (limit %v)", l.Stat, time.Duration(l.Max)))
		case !ok:
			over = append(over, fmt.Sprintf("%s: not computed (limit %v)", l.Stat, time.Duration(l.Max)))
		case v > l.Max:
			over = append(over, fmt.Sprintf("%s %v > limit %v", l.Stat, time.Duration(v).Round(time.Nanosecond), time.Duration(l.Max)))
		}
	}
	if len(over) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrLimit, strings.Join(over, "; "))
}
