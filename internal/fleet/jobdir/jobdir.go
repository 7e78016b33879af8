// Package jobdir is the layout of a fleet job's directory, which every
// node sees on a shared filesystem: the plan, one result or failure file
// per pair and round, the programs' raw output, and the report. Files are
// written under a temporary name and renamed, so that a reader on another
// node never sees half of one.
package jobdir

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/rdmabench/rdmabench/internal/atomicfile"
	"github.com/rdmabench/rdmabench/internal/fleet"
)

// The job directory's layout: one file per pair and round.
const (
	PairsDir   = "pairs"      // benchfmt results (.txt) or a failure (.failed)
	RawDir     = "raw"        // the benchmark's and rdmapeer's own output
	PlanFile   = "plan.txt"   // the plan, "<round> <src> <dst>" per line
	RoundsFile = "rounds.txt" // how long each round took
	RetestDir  = "retest"     // a retest's own job directory, inside the first
)

// PairBase names a step's files: round01-n1-n2.
func PairBase(s fleet.Step) string {
	return fmt.Sprintf("round%02d-%s-%s", s.Round, s.Src, s.Dst)
}

// ResultPath is the step's result file, benchfmt.
func ResultPath(dir string, s fleet.Step) string {
	return filepath.Join(dir, PairsDir, PairBase(s)+".txt")
}

// FailedPath is the step's failure file, written when it has no result.
func FailedPath(dir string, s fleet.Step) string {
	return filepath.Join(dir, PairsDir, PairBase(s)+".failed")
}

// RawPath is the step's raw output of one program ("bench.out", "peer.log").
func RawPath(dir string, s fleet.Step, what string) string {
	return filepath.Join(dir, RawDir, PairBase(s)+"."+what)
}

// MaxPlan bounds a plan file: all pairs of 3,000 nodes fit.
const MaxPlan = 128 << 20

// ReadPlan reads a plan file, a regular one of at most MaxPlan bytes,
// stopping when ctx is done.
func ReadPlan(ctx context.Context, path string) (*fleet.Plan, error) {
	b, err := ReadFile(ctx, path, MaxPlan)
	if err != nil {
		return nil, err
	}
	return fleet.ReadPlan(bytes.NewReader(b), path)
}

// WriteAtomic writes a file under a temporary name and renames it, so
// that a reader on the shared filesystem never sees half of it. It is
// readable by all (0644), like every other file of the job directory.
func WriteAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, 0o644)
}

// RecordFailed writes the step's failure file, unless its result is
// already there (the agents of both ends may both try).
func RecordFailed(dir string, s fleet.Step, reason string) error {
	if _, err := os.Stat(ResultPath(dir, s)); err == nil {
		return nil
	}
	reason = CutReason(strings.Join(strings.Fields(reason), " "))
	text := fmt.Sprintf("round: %d\nsrc: %s\ndst: %s\nreason: %s\n", s.Round, s.Src, s.Dst, reason)
	return WriteAtomic(FailedPath(dir, s), []byte(text))
}

// MaxReason is the longest reason ReadFailed returns, in bytes: a
// failure file is written by any node of the job, and its reason is copied
// to outliers.txt and the report's output.
const MaxReason = 512

// maxFailed bounds what ReadFailed reads of a failure file: RecordFailed
// writes a few lines before the reason.
const maxFailed = 4 << 10

// ReadFailed returns the reason in a failure file, on one line and cut to
// MaxReason bytes (saying how much was cut), stopping when ctx is done.
func ReadFailed(ctx context.Context, path string) (string, error) {
	f, err := Open(ctx, path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFailed))
	if err != nil {
		return "", err
	}
	text := "\n" + string(data)
	i := strings.Index(text, "\nreason: ")
	if i < 0 {
		return "", fmt.Errorf("%s: no \"reason:\" line", path)
	}
	start := i + len("\nreason: ")
	r, _, _ := strings.Cut(text[start:], "\n")
	return CutReason(strings.Join(strings.Fields(r), " ")), nil
}

// CutReason cuts r to MaxReason bytes on a character boundary, saying so.
func CutReason(r string) string {
	if len(r) <= MaxReason {
		return r
	}
	cut := MaxReason
	for cut > 0 && !utf8.RuneStart(r[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (cut: over %d bytes)", r[:cut], MaxReason)
}

// RoundResultsDir holds one results file per round (RoundPath).
const RoundResultsDir = "rounds"

// RoundPath is round r's results file: the pair files of the round that
// hold results, one after the other, so that a report opens one file a
// round rather than one a pair (499,500 pairs for 1000 nodes).
func RoundPath(dir string, r int) string {
	return filepath.Join(dir, RoundResultsDir, fmt.Sprintf("round%02d.txt", r))
}

// maxPairFile bounds a pair file copied into its round's file.
const maxPairFile = 1 << 20

// WriteRound writes the round file of steps (one round's) from their pair
// files, atomically: each pair file that reads as that pair's results,
// whole; the others are left out (the report reads them, and says why,
// from their own files).
func WriteRound(ctx context.Context, dir string, steps []fleet.Step) error {
	if len(steps) == 0 {
		return nil
	}
	var all bytes.Buffer
	var f fleet.PairFile
	p := fleet.NewPairParser()
	for _, s := range steps {
		data, err := ReadFile(ctx, ResultPath(dir, s), maxPairFile)
		if err != nil {
			if err := ctx.Err(); err != nil {
				return err
			}
			continue
		}
		if p.Parse(bytes.NewReader(data), ResultPath(dir, s), s.Src, s.Dst, false, &f) != nil {
			continue
		}
		all.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			all.WriteByte('\n')
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, RoundResultsDir), 0o755); err != nil {
		return err
	}
	return WriteAtomic(RoundPath(dir, steps[0].Round), all.Bytes())
}
