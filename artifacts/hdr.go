// Package artifacts writes what a latency benchmark run leaves behind for
// people and other tools, into a directory such as testing.B.ArtifactDir:
// the raw samples in order, the HDR histogram in HdrHistogram's own
// encoded form (an interval log, .hlog, that HdrHistogram's Java, C and
// Python tools and hdrhistogram-go read), its percentile distribution as
// text (.hgrm, what HdrHistogram's online plotter takes), and a JSON
// summary of every size of a benchmark, its statistics as package latency
// defines them. The plots beside them are package latplot's
// (latplot.WritePlots), so that reading these files links no plotting.
//
// It is pure Go: no cgo, no testing, no RDMA. Values are nanoseconds of
// the latency the benchmark reports (one-way for ib_write_lat-style
// benchmarks); Scale turns a round-trip histogram into one.
package artifacts

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// File name suffixes, after the run's name.
const (
	SamplesExt = ".samples.txt"
	HlogExt    = ".hlog"
	HgrmExt    = ".hgrm"
)

// Scale returns a copy of h with every value multiplied by factor (0.5
// turns round trips into one-way latency), with the same precision.
// Values are placed by the lowest value of their bucket, so a percentile
// of the copy is within h's precision (0.1% at 3 digits) of factor times
// the same percentile of h.
func Scale(h *hdrhistogram.Histogram, factor float64) *hdrhistogram.Histogram {
	out := hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
	out.SetTag(h.Tag())
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		v := max(int64(float64(bar.From)*factor), out.LowestTrackableValue())
		out.RecordValues(v, bar.Count)
	}
	return out
}

// FromSamples returns a histogram of samples (ns) with 3 significant
// digits from 1 ns to 100 s, the benchmarks' own precision.
func FromSamples(samples []int64) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, 100e9, 3)
	for _, s := range samples {
		h.RecordValue(max(s, 1))
	}
	return h
}

// hlogTag makes a benchmark name usable as an HdrHistogram tag, which may not
// hold commas or spaces: "BenchmarkRDMAWrite/size=2" stays as it is.
func hlogTag(name string) string {
	return strings.Map(func(r rune) rune {
		if r == ',' || r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return '_'
		}
		return r
	}, name)
}

// WriteHlog writes h as a one-interval HdrHistogram log, tagged with
// hlogTag(tag), to dir/name.hlog, and returns the path. Any HdrHistogram log
// reader decodes it (hdrhistogram-go's HistogramLogReader,
// HistogramLogProcessor); the tag says which benchmark it is when many
// logs are read together.
func WriteHlog(dir, name, tag string, h *hdrhistogram.Histogram) (string, error) {
	h = h.Clone()
	h.SetTag(hlogTag(tag))
	return writeFile(filepath.Join(dir, name+HlogExt), func(w io.Writer) error {
		lw := hdrhistogram.NewHistogramLogWriter(w)
		if err := lw.OutputLogFormatVersion(); err != nil {
			return err
		}
		if err := lw.OutputComment("rdmabench latency, nanoseconds: " + hlogTag(tag)); err != nil {
			return err
		}
		if err := lw.OutputLegend(); err != nil {
			return err
		}
		return lw.OutputIntervalHistogram(h)
	})
}

// ReadHlog reads every interval histogram of an HdrHistogram log.
func ReadHlog(path string) ([]*hdrhistogram.Histogram, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Lines are bounded (MaxHlogLine) and each histogram's header checked
	// before the log reader allocates its counts.
	r := hdrhistogram.NewHistogramLogReader(bufio.NewReader(newHlogGuard(f, path)))
	var hs []*hdrhistogram.Histogram
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			return hs, fmt.Errorf("%s: %w", path, err)
		}
		if h == nil {
			return hs, nil
		}
		hs = append(hs, h)
	}
}

// maxHlogLine bounds a line of an HDR log: one interval's histogram,
// compressed and base64-encoded, takes a few kilobytes.
const maxHlogLine = 1 << 20

// writeHgrm writes h's percentile distribution in HdrHistogram's text form
// (values in microseconds, 5 ticks per half distance) to dir/name.hgrm.
func writeHgrm(dir, name string, h *hdrhistogram.Histogram) (string, error) {
	return writeFile(filepath.Join(dir, name+HgrmExt), func(w io.Writer) error {
		_, err := h.PercentilesPrint(w, 5, 1000)
		return err
	})
}

// writeSamples writes samples (ns) one per line in the order measured to
// dir/name.samples.txt.
func writeSamples(dir, name string, samples []int64) (string, error) {
	return writeFile(filepath.Join(dir, name+SamplesExt), func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		buf := make([]byte, 0, 24)
		for _, s := range samples {
			buf = strconv.AppendInt(buf[:0], s, 10)
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
}

func writeFile(path string, fill func(io.Writer) error) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("artifacts: %w", err)
	}
	err = fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("artifacts: writing %s: %w", path, err)
	}
	return path, nil
}
