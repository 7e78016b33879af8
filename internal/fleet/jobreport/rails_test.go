package jobreport

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/fleet"
)

// railJob copies testdata/job with two rails in every result file: rail
// r1 the recorded results (n4 ~100 us slower), rail r0 the same with n4's
// pairs ten times faster (~11 us, as fast as the others): n4's NIC of
// rail r1 is slow, not the node.
func railJob(t *testing.T) string {
	t.Helper()
	dir := copyDir(t, "testdata/job")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(path)) != "pairs" || !strings.HasSuffix(path, ".txt") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var out strings.Builder
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if !strings.HasPrefix(line, "Benchmark") {
				out.WriteString(line)
				continue
			}
			out.WriteString(scaleTimes(strings.Replace(line, "/size=", "/rail=r0/size=", 1), strings.Contains(line, "n4")))
			out.WriteString(strings.Replace(line, "/size=", "/rail=r1/size=", 1))
		}
		return os.WriteFile(path, []byte(out.String()), 0o644)
	})
	require.NoError(t, err)
	return dir
}

// scaleTimes divides a result line's times by ten when slow.
func scaleTimes(line string, slow bool) string {
	if !slow {
		return line
	}
	f := strings.Fields(line)
	for i := 1; i+1 < len(f); i++ {
		if u := f[i+1]; u == "ns/op" || strings.HasSuffix(u, "-ns") {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				f[i] = strconv.FormatFloat(v/10, 'f', -1, 64)
			}
		}
	}
	return strings.Join(f, " ") + "\n"
}

// TestReportRails: with two rails, each is judged on its own: the slow
// rail r1 flags n4's pairs and names n4 on that rail, the fast rail r0
// has no outliers, the summary says n4 is suspect on 1 of 2 rails (its
// NIC, not the node), the retest is judged per rail, each rail has its
// heat map, and the driver retests the pairs bad on any rail.
func TestReportRails(t *testing.T) {
	dir := railJob(t)
	var stdout bytes.Buffer
	require.NoError(t, Write(t.Context(), dir, DefaultOptions, &stdout))
	out := readJobFile(t, dir, "outliers.txt")
	t.Logf("outliers.txt:\n%s", out)
	assert.Equal(t, out, stdout.String())
	for _, want := range []string{
		"rails: 2, each judged on its own (a section each below)\n",
		"rail r0: 6 pairs measured, 0 flagged, 0 failed; suspect nodes: none\n",
		"rail r1: 6 pairs measured, 3 flagged, 0 failed; suspect nodes: n4\n",
		"node n4: suspect on 1 of 2 rails: suspect those rails' NICs or links\n",
		"judged on: RDMAWrite/rail=r0/size=2 p50-sec, 4 nodes, plan all-pairs\nheat map: heatmap-r0.png, .svg\n",
		"judged on: RDMAWrite/rail=r1/size=2 p50-sec, 4 nodes, plan all-pairs\nheat map: heatmap-r1.png, .svg\n",
		"flagged: round 1 n1 n4 rail r1 112.31us = 9.71x min (rules min)\n",
		"node n4 rail r1: in 3 of its 3 pairs flagged or failed\n",
		"retest rail r1 (3 pairs in 3 rounds, against the limits above):\n",
		"retest: n1 n4 rail r1 111.68us: still slow (confirmed)\n",
		"confirmed rail r1: 3 of 3\n",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "retest rail r0", "no pair of rail r0 was bad")
	// The r0 section has no outliers.
	r0 := out[strings.Index(out, "judged on: RDMAWrite/rail=r0"):strings.Index(out, "judged on: RDMAWrite/rail=r1")]
	assert.Contains(t, r0, "no outliers\n")
	for _, name := range []string{"heatmap-r0.png", "heatmap-r0.svg", "heatmap-r1.png", "heatmap-r1.svg"} {
		assert.FileExists(t, filepath.Join(dir, name))
	}
	assert.NoFileExists(t, filepath.Join(dir, "heatmap.png"), "with rails, a heat map per rail")
	assert.Contains(t, readJobFile(t, dir, "heatmap-r1.svg"), "RDMAWrite/rail=r1/size=2")

	as, err := Analyse(t.Context(), dir, DefaultOptions)
	require.NoError(t, err)
	require.Len(t, as, 2)
	assert.Empty(t, as[0].BadPairs())
	assert.ElementsMatch(t, []fleet.Pair{{Src: "n1", Dst: "n4"}, {Src: "n4", Dst: "n2"}, {Src: "n3", Dst: "n4"}}, BadPairs(as))

	// -judge naming a rail judges that rail alone, as before.
	o := DefaultOptions
	o.Bench = "RDMAWrite/rail=r1/size=2"
	stdout.Reset()
	require.NoError(t, Write(t.Context(), dir, o, &stdout))
	assert.True(t, strings.HasPrefix(stdout.String(), "judged on: RDMAWrite/rail=r1/size=2 p50-sec"), stdout.String())
	assert.NotContains(t, stdout.String(), "rail r1", "one rail judged: lines as without rails")
	// -judge without a rail judges that benchmark on every rail.
	o.Bench = "RDMAWrite/size=4096"
	stdout.Reset()
	require.NoError(t, Write(t.Context(), dir, o, &stdout))
	assert.Contains(t, stdout.String(), "judged on: RDMAWrite/rail=r0/size=4096 p50-sec")
	assert.Contains(t, stdout.String(), "judged on: RDMAWrite/rail=r1/size=4096 p50-sec")
}

// TestJudgedBenches: which benchmarks are judged, with and without rails.
func TestJudgedBenches(t *testing.T) {
	plain := []string{"RDMAWrite/size=2", "RDMAWrite/size=64"}
	rails := []string{"RDMAWrite/rail=a/size=2", "RDMAWrite/rail=a/size=64", "RDMAWrite/rail=b/size=2", "RDMAWrite/rail=b/size=64"}
	for _, c := range []struct {
		benches []string
		judge   string
		want    []string
	}{
		{plain, "", []string{"RDMAWrite/size=2"}},
		{plain, "RDMAWrite/size=64", []string{"RDMAWrite/size=64"}},
		{nil, "", []string{""}},
		{rails, "", []string{"RDMAWrite/rail=a/size=2", "RDMAWrite/rail=b/size=2"}},
		{rails, "RDMAWrite/size=64", []string{"RDMAWrite/rail=a/size=64", "RDMAWrite/rail=b/size=64"}},
		{rails, "RDMAWrite/rail=b/size=64", []string{"RDMAWrite/rail=b/size=64"}},
		{rails, "RDMARead/size=2", []string{"RDMARead/size=2"}}, // absent: its pairs fail with the reason
	} {
		assert.Equal(t, c.want, judgedBenches(c.benches, c.judge), "%v -judge %q", c.benches, c.judge)
	}
	assert.Equal(t, "heatmap-rail2", heatmapName(judgedBench{rail: "../x"}, 2, 1), "a rail unfit for a file name")
	assert.Equal(t, "heatmap", heatmapName(judgedBench{rail: "a"}, 1, 0))
}

// TestReportRailsBounded: results naming more rails than maxRails have
// the first maxRails judged, and the report says how many were left.
func TestReportRailsBounded(t *testing.T) {
	dir := copyDir(t, "testdata/job")
	path := filepath.Join(dir, "pairs", "round01-n1-n4.txt")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var extra strings.Builder
	for i := range maxRails + 3 {
		extra.WriteString(fmt.Sprintf("BenchmarkRDMAWrite/src=n1/dst=n4/rail=r%d/size=2-4 5000 11000 ns/op 11000 p50-ns\n", i))
	}
	// The rails come first, so that the first benchmark is a rail's.
	header, results, _ := strings.Cut(string(b), "BenchmarkRDMAWrite")
	require.NoError(t, os.WriteFile(path, []byte(header+extra.String()+"BenchmarkRDMAWrite"+results), 0o644))
	var stdout bytes.Buffer
	require.NoError(t, Write(t.Context(), dir, DefaultOptions, &stdout))
	out := stdout.String()
	assert.Contains(t, out, fmt.Sprintf("rails: %d, each judged on its own", maxRails))
	assert.Contains(t, out, "3 more rails in the results are not judged (at most 32 are)")
	assert.FileExists(t, filepath.Join(dir, fmt.Sprintf("heatmap-r%d.png", maxRails-1)))
	assert.NoFileExists(t, filepath.Join(dir, fmt.Sprintf("heatmap-r%d.png", maxRails)))
}
