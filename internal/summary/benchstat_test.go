package summary

import (
	"encoding/csv"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
)

// benchstatCell is one figure as benchstat prints it in CSV: the center
// and the interval as a percentage.
type benchstatCell struct {
	center float64
	ci     string
}

// runBenchstat runs the module's own benchstat (a tool dependency in
// go.mod) on path with -format csv and returns its cells by config group
// ("key=value" lines joined by ","), unit and benchmark name.
func runBenchstat(t *testing.T, path string) map[string]map[string]map[string]benchstatCell {
	t.Helper()
	cmd := exec.Command("go", "tool", "benchstat", "-format", "csv", path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go tool benchstat: %s", stderr.String())
	cells := map[string]map[string]map[string]benchstatCell{}
	group, unit := "", ""
	var labels []string
	blank := true
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case line == "":
			blank = true
			continue
		case !strings.HasPrefix(line, ",") && strings.Contains(line, ": ") && !strings.Contains(line, ","):
			if blank {
				labels = nil
			}
			k, v, _ := strings.Cut(line, ": ")
			labels = append(labels, k+"="+v)
			group = strings.Join(labels, ",")
			blank = false
			continue
		}
		blank = false
		rec, err := csv.NewReader(strings.NewReader(line)).Read()
		if err == io.EOF {
			continue
		}
		require.NoError(t, err, line)
		if rec[0] == "" {
			if len(rec) == 3 && rec[2] == "CI" {
				unit = rec[1]
			}
			continue
		}
		if rec[0] == "geomean" || len(rec) < 3 {
			continue
		}
		v, err := strconv.ParseFloat(rec[1], 64)
		require.NoError(t, err, line)
		if cells[group] == nil {
			cells[group] = map[string]map[string]benchstatCell{}
		}
		if cells[group][unit] == nil {
			cells[group][unit] = map[string]benchstatCell{}
		}
		cells[group][unit][rec[0]] = benchstatCell{v, rec[2]}
	}
	return cells
}

// TestAgreesWithBenchstat checks every cell of the summary of a real
// results file against benchstat's own figures from the same file: the
// same median and the same interval.
func TestAgreesWithBenchstat(t *testing.T) {
	if os.Getenv(env.VarVM) == "1" {
		t.Skip("skipping: benchstat runs through the go command, which the soft-RoCE VM lacks; the host runs this test")
	}
	const path = "testdata/bench.txt"
	f, err := ReadFile(path)
	require.NoError(t, err)
	tab := Summarize(f, DefaultOptions)
	bs := runBenchstat(t, path)
	checked := 0
	for _, r := range tab.Rows {
		// benchstat labels each group with the config lines that differ
		// between groups; the summary's varying keys must be among them.
		var group map[string]map[string]benchstatCell
		for g, units := range bs {
			match := true
			for _, k := range tab.Varying {
				if !strings.Contains(","+g+",", ","+k+"="+r.Config[k]+",") {
					match = false
				}
			}
			if match && units[Metrics[1].Unit][r.Name] != (benchstatCell{}) {
				require.Nil(t, group, "%s: in more than one of benchstat's groups: the summary would mix them", r.Name)
				group = units
			}
		}
		require.NotNil(t, group, "%s %v: not in benchstat's output", r.Name, r.Config)
		for _, m := range Metrics {
			s, ok := r.Cells[m.Unit]
			want, inBenchstat := group[m.Unit][r.Name]
			require.Equal(t, inBenchstat, ok, "%s %s: in benchstat %v, in the summary %v", r.Name, m.Unit, inBenchstat, ok)
			if !ok {
				continue
			}
			assert.InDelta(t, want.center, s.Center, 1e-12*math.Abs(want.center), "%s %s center", r.Name, m.Unit)
			assert.Equal(t, want.ci, s.PctRangeString(), "%s %s interval", r.Name, m.Unit)
			checked++
		}
	}
	assert.Greater(t, checked, 100, "cells compared")
}
