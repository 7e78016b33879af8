package rdmalat

import (
	"flag"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/latency"
)

type logRecorder struct {
	name  string
	lines []string
}

func (l *logRecorder) Name() string { return l.name }
func (l *logRecorder) Logf(format string, args ...any) {
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// TestLogWarnings: a benchmark's summary warnings are logged the first
// time it has any, and not again in its later -count repetitions.
func TestLogWarnings(t *testing.T) {
	name := t.Name() + "/size=2"
	t.Cleanup(func() { warned.Clear() }) // -count repeats this test with the same names
	rec := latency.NewRecorder(true)
	for range 500 {
		rec.Record(2000)
	}
	s := rec.Summary()
	require.NotEmpty(t, s.Warnings, "500 samples are too few for p99.9")
	l := &logRecorder{name: name}
	logWarnings(l, nil)
	assert.Empty(t, l.lines, "nothing to say")
	logWarnings(l, s.Warnings)
	logWarnings(l, s.Warnings) // the next repetition
	assert.Equal(t, []string{
		"p99.9 needs at least 1000 samples, have 500; p99.99 needs at least 10000 samples, have 500 (shown once per benchmark; more samples with -benchtime, e.g. -benchtime=100000x)",
	}, l.lines)
	other := &logRecorder{name: t.Name() + "/size=64"}
	logWarnings(other, s.Warnings)
	assert.Len(t, other.lines, 1, "another benchmark logs its own")
}

func TestCheckCPUFlag(t *testing.T) {
	f := flag.Lookup("test.cpu")
	require.NotNil(t, f, "testing registers -test.cpu")
	saved := f.Value.String()
	t.Cleanup(func() { f.Value.Set(saved) }) // testing parsed it already: setting it changes nothing else
	for _, v := range []string{"", "1", "4", " 4 ,"} {
		require.NoError(t, f.Value.Set(v))
		assert.NoError(t, CheckCPUFlag(), "-cpu %q", v)
	}
	require.NoError(t, f.Value.Set("1,4"))
	assert.EqualError(t, CheckCPUFlag(), "-cpu 1,4: the RDMA benchmarks measure at GOMAXPROCS 1 whatever -cpu says, so each value would repeat the same run under another name; drop -cpu (or give -cpu 1 for names without the -N suffix) and use -count for repetitions")
}

// TestQuietScheduler: GOMAXPROCS is 1 while any Run is open and comes back
// when the last closes, whether it was the automatic value or one set by
// hand.
func TestQuietScheduler(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	for _, procs := range []int{before, before + 3} {
		runtime.GOMAXPROCS(procs)
		first := quietScheduler()
		second := quietScheduler()
		assert.Equal(t, 1, runtime.GOMAXPROCS(0))
		first()
		first() // idempotent: does not count as the second's close
		assert.Equal(t, 1, runtime.GOMAXPROCS(0), "one Run still open")
		second()
		assert.Equal(t, procs, runtime.GOMAXPROCS(0))
	}
}

// fixedIterations reads N from -test.benchtime=Nx and nothing else.
func TestFixedIterations(t *testing.T) {
	f := flag.Lookup("test.benchtime")
	require.NotNil(t, f, "testing registers -test.benchtime")
	saved := f.Value.String()
	t.Cleanup(func() { f.Value.Set(saved) })
	for v, want := range map[string]int{"5000x": 5000, "1x": 1, "1s": 0, "100ms": 0} {
		require.NoError(t, f.Value.Set(v))
		assert.Equal(t, want, fixedIterations(), "-benchtime %s", v)
	}
}
