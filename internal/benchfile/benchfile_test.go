package benchfile

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/perf/benchfmt"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const output = `goos: linux
pkg: github.com/rdmabench/rdmabench
Unit p50-ns better=lower
BenchmarkRDMAWrite/size=2-4   	    1000	      7543 ns/op	      7490 p50-ns
--- BENCH: BenchmarkRDMAWrite/size=2-4
    bench_test.go:12: a log line
BenchmarkRDMAWrite/size=4096-4 1000 x ns/op
BenchmarkRDMAWrite/size=4096-4	    1000	     12911 ns/op	     12890 p50-ns
PASS
`

type seen struct {
	name  string
	iters int
	units []string
	pkg   string
}

func collect(t *testing.T, malformed Malformed) ([]seen, Info, error) {
	t.Helper()
	var got []seen
	info, err := Read(strings.NewReader(output), "bench.txt", malformed, func(res *benchfmt.Result) error {
		s := seen{name: string(res.Name), iters: res.Iters, pkg: res.GetConfig("pkg")}
		for _, v := range res.Values {
			s.units = append(s.units, v.Unit)
		}
		got = append(got, s)
		return nil
	})
	return got, info, err
}

// TestSkip: a benchmark's raw output: the malformed line is kept aside,
// both results arrive with their config, units tidied as benchstat does.
func TestSkip(t *testing.T) {
	got, info, err := collect(t, Skip)
	require.NoError(t, err)
	assert.Equal(t, []seen{
		{"RDMAWrite/size=2-4", 1000, []string{"sec/op", "p50-sec"}, "github.com/rdmabench/rdmabench"},
		{"RDMAWrite/size=4096-4", 1000, []string{"sec/op", "p50-sec"}, "github.com/rdmabench/rdmabench"},
	}, got)
	assert.Equal(t, 2, info.Results)
	require.Len(t, info.Skipped, 1)
	assert.ErrorContains(t, info.Skipped[0], "bench.txt:7: ")
	assert.Equal(t, "lower", info.Units.Get("p50-ns", "better").Value)
}

// TestFail: in a results file the malformed line ends the read, after the
// results before it.
func TestFail(t *testing.T) {
	got, info, err := collect(t, Fail)
	var syntax *benchfmt.SyntaxError
	require.ErrorAs(t, err, &syntax)
	assert.Equal(t, "bench.txt", syntax.FileName)
	assert.Equal(t, 7, syntax.Line)
	assert.Len(t, got, 1)
	assert.Equal(t, 1, info.Results)
}

// TestCallbackError: fn's error ends the read as it is; a reader's error
// comes back too.
func TestCallbackError(t *testing.T) {
	stop := errors.New("enough")
	n := 0
	_, err := Read(strings.NewReader(output), "bench.txt", Skip, func(*benchfmt.Result) error { n++; return stop })
	assert.Same(t, stop, err)
	assert.Equal(t, 1, n)

	broken := iotest.ErrReader(errors.New("disk gone"))
	_, err = Read(broken, "bench.txt", Fail, func(*benchfmt.Result) error { return nil })
	assert.ErrorContains(t, err, "disk gone")
}
