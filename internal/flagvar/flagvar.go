// Package flagvar holds the flag.Value types the commands share: a
// repeatable string flag and a percentage.
package flagvar

import (
	"fmt"
	"strconv"
	"strings"
)

// Strings is a repeatable string flag: each use appends its value.
type Strings []string

func (m *Strings) String() string     { return strings.Join(*m, ",") }
func (m *Strings) Set(s string) error { *m = append(*m, s); return nil }

// Percent reads "5%" or "0.05" into the fraction it points to.
type Percent struct{ P *float64 }

func (f Percent) String() string {
	if f.P == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.P*100, 'g', -1, 64) + "%"
}

func (f Percent) Set(s string) error {
	v, err := ParsePercent(s)
	if err != nil {
		return err
	}
	*f.P = v
	return nil
}

// ParsePercent reads "5%" as 0.05 and a bare "0.05" as 0.05.
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q: want a percentage like 5%%", s)
	}
	if pct {
		v /= 100
	}
	return v, nil
}
