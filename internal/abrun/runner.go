package abrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/cmdout"
	"github.com/rdmabench/rdmabench/internal/turn"
)

// RunSides runs the comparison: a duet when asked and both binaries can
// take turns, else interleaved runs. It writes way.txt, which says which
// ran and why.
func RunSides(ctx context.Context, s *Spec, progress io.Writer) error {
	way := "duet: both sides' processes alive at once, taking turns of " + strconv.Itoa(s.Burst) + " round trips"
	duet := s.Duet
	switch {
	case s.Work:
		duet = false
		way = "interleaved runs counting instructions (-work: the VM's one counter counts one process at a time)"
	case !duet:
		way = "interleaved runs (-duet=false)"
	}
	for side := range s.Bins {
		if !duet {
			break
		}
		ok, err := supportsTurns(s.Bins[side])
		if err != nil {
			return err
		}
		if !ok {
			duet = false
			way = fmt.Sprintf("interleaved runs: the %s side's binary %s predates turn-taking (it lacks %s)", abtest.Side(side), s.Bins[side], turn.Version)
		}
	}
	if s.Work {
		way += lowerWarmup(s)
	}
	if !s.THP {
		// Set on this process, inherited by every benchmark process it
		// starts (fork keeps the flag, exec too).
		if err := disableTHP(); err != nil {
			return fmt.Errorf("-thp=false: %w (give -thp to run with huge pages)", err)
		}
		way += "; transparent huge pages off for both sides"
	}
	if err := os.MkdirAll(s.OutDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.OutDir, "way.txt"), []byte(way+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(progress, "rdmaab: %s\n", way)
	if duet {
		return runDuet(ctx, s, progress)
	}
	_, err := runInterleaved(ctx, s, progress)
	return err
}

// lowerWarmup sets each side's RDMABENCH_WARMUP to s.WorkWarmup where
// neither the environment nor the side's -env sets it, and says what the
// runs warm up with, for way.txt.
func lowerWarmup(s *Spec) string {
	if v := os.Getenv(env.VarWarmup); v != "" {
		return "; warm-up " + v + " round trips a run (" + env.VarWarmup + ")"
	}
	for side := range s.Env {
		if !slices.ContainsFunc(s.Env[side], func(kv string) bool { return strings.HasPrefix(kv, env.VarWarmup+"=") }) {
			s.Env[side] = append(s.Env[side], env.VarWarmup+"="+strconv.Itoa(s.WorkWarmup))
		}
	}
	return "; warm-up " + strconv.Itoa(s.WorkWarmup) + " round trips a run (-work-warmup), where -old-env/-new-env set none"
}

// sideFile is where a side's benchmark output accumulates.
func sideFile(dir string, side abtest.Side) string { return filepath.Join(dir, side.String()+".txt") }

// runInterleaved runs the two binaries in alternating pairs, appends each
// run's standard output to old.txt or new.txt and its standard error to
// old.log or new.log under s.OutDir, records the order in order.txt, and
// stops by s's rule. It returns the stop state; stop.txt says it too.
func runInterleaved(ctx context.Context, s *Spec, progress io.Writer) (abtest.StopState, error) {
	rule, err := s.stopRule()
	if err != nil {
		return abtest.StopState{}, err
	}
	if err := os.MkdirAll(s.OutDir, 0o755); err != nil {
		return abtest.StopState{}, err
	}
	var files [2]*os.File
	for _, side := range []abtest.Side{abtest.Old, abtest.New} {
		// Truncate: a file holds one comparison.
		f, err := os.Create(sideFile(s.OutDir, side))
		if err != nil {
			return abtest.StopState{}, err
		}
		defer f.Close()
		files[side] = f
	}
	order, err := os.Create(filepath.Join(s.OutDir, "order.txt"))
	if err != nil {
		return abtest.StopState{}, err
	}
	defer order.Close()

	var pairs []abtest.Pair
	var st abtest.StopState
	for i := 0; !st.Done; i++ {
		var p abtest.Pair
		for _, side := range abtest.Order(i) {
			start := time.Now()
			more, err := workArgs(s, side, i+1)
			if err != nil {
				return st, err
			}
			out, err := runOnce(ctx, s, side, more...)
			fmt.Fprintf(order, "pair %d %s\n", i+1, side)
			if err != nil {
				return st, fmt.Errorf("pair %d, %s side: %w", i+1, side, err)
			}
			if _, err := files[side].Write(out.stdout); err != nil {
				return st, err
			}
			appendFile(filepath.Join(s.OutDir, side.String()+".log"), out.stderr)
			rs, err := abtest.ReadResults(bytes.NewReader(out.stdout), s.Bins[side])
			if err != nil {
				return st, fmt.Errorf("pair %d, %s side: %w", i+1, side, err)
			}
			if len(rs.Keys) == 0 {
				return st, fmt.Errorf("pair %d, %s side: %s ran no benchmark matching -bench %q%s", i+1, side, s.Bins[side], s.Bench, cmdout.Tail(out.stdout, tailLines))
			}
			if side == abtest.Old {
				p.Old = rs
			} else {
				p.New = rs
			}
			fmt.Fprintf(progress, "rdmaab: pair %d/%d: %s ran in %.1f s\n", i+1, s.Pairs, side, time.Since(start).Seconds())
		}
		pairs = append(pairs, p)
		st = rule.Check(pairs)
		if s.CI > 0 {
			fmt.Fprintf(progress, "rdmaab: %s\n", st)
		}
	}
	msg := st.String()
	if s.CI == 0 {
		msg = fmt.Sprintf("ran the %d pairs asked for (-count %d); %s", st.Pairs, s.Pairs, widest(st))
	}
	if err := os.WriteFile(filepath.Join(s.OutDir, "stop.txt"), []byte(msg+"\n"), 0o644); err != nil {
		return st, err
	}
	return st, nil
}

func widest(st abtest.StopState) string {
	if st.Widest == nil {
		return "no result on both sides for the paired ratios"
	}
	return "widest paired interval " + st.Widest.String()
}

// runOutput is one run's output.
type runOutput struct {
	stdout, stderr []byte
}

// runOnce runs one side's binary for one repetition of every benchmark,
// with more test binary flags.
func runOnce(ctx context.Context, s *Spec, side abtest.Side, more ...string) (runOutput, error) {
	args := append(runArgs(s), more...)
	ctx, cancel := context.WithTimeout(ctx, s.RunTimeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Bins[side], args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), s.Env[side]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	out := runOutput{stdout.Bytes(), stderr.Bytes()}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return out, fmt.Errorf("%s: killed after %s (-run-timeout)%s", s.Bins[side], s.RunTimeout+30*time.Second, cmdout.Tail(append(out.stdout, out.stderr...), tailLines))
	}
	if err != nil {
		return out, fmt.Errorf("%s: %w%s", s.Bins[side], err, cmdout.Tail(append(out.stdout, out.stderr...), tailLines))
	}
	return out, nil
}

// tailLines is how much of a failed run's output an error quotes.
const tailLines = 10

// appendFile appends b to the file name, if there is anything to append.
func appendFile(name string, b []byte) {
	if len(b) == 0 {
		return
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	f.Write(b)
	f.Close()
}
