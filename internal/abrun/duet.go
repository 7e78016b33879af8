package abrun

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/cmdout"
	"github.com/rdmabench/rdmabench/internal/turn"
)

// The duet: both sides' processes alive at once, taking turns in bursts
// of -burst round trips (internal/turn), old and new in ABBA order turn by
// turn, so that both see the same host speed, which on a shared host
// switches every few hundred milliseconds. Each side's output is what it
// would be alone (old.txt, new.txt for benchstat); each burst's median and
// min go to bursts.txt for the paired verdict (paired.go).

// supportsTurns reports whether a test binary can take turns: it carries
// the protocol's version string when it links the engine that speaks it.
func supportsTurns(bin string) (bool, error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return false, err
	}
	return bytes.Contains(b, []byte(turn.Version)), nil
}

// duetGrace is how long the conductor holds the turn for a side that is
// alive but not asking (between benchmarks, in its setup) before letting
// the other side run alone: two builds whose benchmarks differ still end.
const duetGrace = 20 * time.Second

// duetProc is one side's process in a duet.
type duetProc struct {
	side           abtest.Side
	cmd            *exec.Cmd
	conn           *os.File // the conductor's end of the socket
	stdout, stderr bytes.Buffer
	alive, wanting bool
	wantSince      time.Time
}

type duetEvent struct {
	side abtest.Side
	line string
	err  error // io.EOF when the process closed its end
}

// startDuetPair starts both sides of a duet pair in startOrder's order.
// They say hello and ask for the turn,
// then wait, blocked, until runDuetPair conducts them: the conductor
// starts the next pair while the current one runs, so that a process's
// start (seconds under emulation) costs no time of its own, and its CPU
// use falls on both running sides alike.
func startDuetPair(ctx context.Context, s *Spec, pair int) ([2]*duetProc, error) {
	var procs [2]*duetProc
	for _, side := range startOrder(s.Seed, pair) {
		p, err := startDuetProc(ctx, s, side)
		if err != nil {
			killDuetPair(procs)
			return procs, err
		}
		procs[side] = p
	}
	return procs, nil
}

// startOrder is which side's process starts first in duet pair pair
// (1-based): random from seed, balanced in blocks of two pairs (one of each
// order). Not a strict alternation: should a process inherit something
// from the pairs before it (freed memory, allocator state), a fixed
// alternation would hand it to one side pair after pair; drawn, it lands
// on either side by chance.
func startOrder(seed uint64, pair int) [2]abtest.Side {
	block := uint64(pair-1) / 2
	flip := rand.New(rand.NewPCG(seed, block)).IntN(2) == 1
	if pair%2 == 0 {
		flip = !flip
	}
	if flip {
		return [2]abtest.Side{abtest.New, abtest.Old}
	}
	return [2]abtest.Side{abtest.Old, abtest.New}
}

// killDuetPair ends a pair's processes that are still there.
func killDuetPair(procs [2]*duetProc) {
	for _, p := range procs {
		if p != nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
			p.conn.Close()
		}
	}
}

// runDuetPair conducts one duet pair started by startDuetPair: turns
// until both processes have exited. Each done line goes to bursts with
// the pair's number, the side and its time. round is the ABBA round to
// start from; it returns the round reached.
func runDuetPair(ctx context.Context, s *Spec, pair int, procs [2]*duetProc, bursts io.Writer, round int) ([2]runOutput, int, error) {
	var outs [2]runOutput
	ctx, cancel := context.WithTimeout(ctx, s.RunTimeout+30*time.Second)
	defer cancel()
	defer func() {
		for _, p := range procs {
			p.conn.Close()
		}
	}()
	events := make(chan duetEvent, 16)
	quit := make(chan struct{})
	defer close(quit)
	for _, p := range procs {
		go readTurnLines(p.side, p.conn, events, quit)
	}
	start := time.Now()
	holder, pos := -1, 0
	var convErr error
	grant := func(side abtest.Side) {
		p := procs[side]
		p.wanting = false
		holder = int(side)
		if s.Freeze {
			p.cmd.Process.Signal(syscall.SIGCONT)
		}
		if _, err := p.conn.Write([]byte("go " + strconv.Itoa(s.Burst) + "\n")); err != nil && convErr == nil {
			convErr = fmt.Errorf("%s side: giving the turn: %w", side, err)
		}
	}
	grace := time.NewTimer(duetGrace)
	defer grace.Stop()
	for (procs[0].alive || procs[1].alive) && convErr == nil {
		if holder < 0 {
			next := abtest.Order(round)[pos]
			other := 1 - next
			switch {
			case procs[next].wanting:
				grant(next)
			case procs[other].wanting && (!procs[next].alive || time.Since(procs[other].wantSince) >= duetGrace):
				grant(other) // alone: the round's order waits for next
			case procs[other].wanting:
				grace.Reset(duetGrace - time.Since(procs[other].wantSince))
			}
		}
		select {
		case <-ctx.Done():
			convErr = fmt.Errorf("the duet did not end within %s (-run-timeout)", s.RunTimeout+30*time.Second)
		case <-grace.C:
		case ev := <-events:
			p := procs[ev.side]
			if ev.err != nil {
				p.alive = false
				p.wanting = false
				if holder == int(ev.side) {
					holder = -1
				}
				if !errors.Is(ev.err, io.EOF) {
					convErr = fmt.Errorf("%s side: %w", ev.side, ev.err)
				}
				continue
			}
			m, err := turn.Parse(ev.line)
			if err != nil {
				convErr = fmt.Errorf("%s side: %w", ev.side, err)
				continue
			}
			switch m.Verb {
			case "hello":
			case "want":
				if p.wanting || holder == int(ev.side) {
					convErr = fmt.Errorf("%s side asked for the turn twice", ev.side)
					continue
				}
				p.wanting, p.wantSince = true, time.Now()
				if s.Freeze {
					p.cmd.Process.Signal(syscall.SIGSTOP)
				}
			case "done":
				if holder != int(ev.side) {
					convErr = fmt.Errorf("%s side handed back a turn it did not hold", ev.side)
					continue
				}
				b := m.Burst
				fmt.Fprintf(bursts, "%d %s %s %d %d %d %d %d %d %s\n", pair, ev.side, b.Kind, b.Run, b.Seq, b.N, b.Median, b.Min,
					time.Since(start).Microseconds(), b.Label)
				holder = -1
				if ev.side == abtest.Order(round)[pos] {
					if pos++; pos == 2 {
						pos, round = 0, round+1
					}
				}
			default:
				convErr = fmt.Errorf("%s side sent %q, which only the conductor sends", ev.side, ev.line)
			}
		}
	}
	if convErr != nil {
		for _, p := range procs {
			p.cmd.Process.Kill()
		}
	}
	var errs []error
	for side, p := range procs {
		err := p.cmd.Wait()
		outs[side] = runOutput{p.stdout.Bytes(), p.stderr.Bytes()}
		if err != nil && convErr == nil {
			errs = append(errs, fmt.Errorf("%s side: %s: %w%s", abtest.Side(side), s.Bins[side], err, cmdout.Tail(append(outs[side].stdout, outs[side].stderr...), tailLines)))
		}
	}
	if convErr != nil {
		return outs, round, fmt.Errorf("duet: %w", convErr)
	}
	return outs, round, errors.Join(errs...)
}

// startDuetProc starts one side with its end of a fresh socket pair as
// descriptor 3, named by RDMABENCH_TURN_FD.
func startDuetProc(ctx context.Context, s *Spec, side abtest.Side) (*duetProc, error) {
	fds, err := turnSocketpair()
	if err != nil {
		return nil, fmt.Errorf("duet: socketpair: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "turn-conductor"), os.NewFile(uintptr(fds[1]), "turn-"+side.String())
	defer theirs.Close()
	p := &duetProc{side: side, conn: mine, alive: true}
	p.cmd = exec.CommandContext(ctx, s.Bins[side], runArgs(s)...)
	p.cmd.Dir = s.Dir
	p.cmd.Env = append(append(os.Environ(), s.Env[side]...), turn.EnvFD+"=3")
	p.cmd.ExtraFiles = []*os.File{theirs}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	if err := startFixedLayout(p.cmd, !s.ASLR); err != nil {
		mine.Close()
		return nil, fmt.Errorf("%s side: %w", side, err)
	}
	return p, nil
}

// readTurnLines sends each line a process writes to events, then its end.
func readTurnLines(side abtest.Side, conn *os.File, events chan<- duetEvent, quit <-chan struct{}) {
	sc := bufio.NewScanner(conn)
	send := func(ev duetEvent) bool {
		select {
		case events <- ev:
			return true
		case <-quit:
			return false
		}
	}
	for sc.Scan() {
		if !send(duetEvent{side: side, line: sc.Text()}) {
			return
		}
	}
	err := sc.Err()
	if err == nil || errors.Is(err, os.ErrClosed) {
		err = io.EOF
	}
	send(duetEvent{side: side, err: err})
}

// runDuet runs duet pairs, appends each side's output to old.txt and
// new.txt and every burst to bursts.txt, and stops by the paired
// sequential rule on the -ci-units it covers (stop.txt says why).
func runDuet(ctx context.Context, s *Spec, progress io.Writer) error {
	if err := os.MkdirAll(s.OutDir, 0o755); err != nil {
		return err
	}
	var files [2]*os.File
	for _, side := range []abtest.Side{abtest.Old, abtest.New} {
		f, err := os.Create(sideFile(s.OutDir, side))
		if err != nil {
			return err
		}
		defer f.Close()
		files[side] = f
	}
	bf, err := os.Create(filepath.Join(s.OutDir, burstsFile))
	if err != nil {
		return err
	}
	defer bf.Close()
	order, err := os.Create(filepath.Join(s.OutDir, "order.txt"))
	if err != nil {
		return err
	}
	defer order.Close()
	rule := s.SequentialRule()
	units, _ := abtest.ParseUnits(s.Gate.Metrics)
	// It may stop early only where the bursts judge every gated unit:
	// the others (p99) are judged over the runs, which want all -count.
	covered, rest := coveredUnits(units)
	canStop := len(covered) > 0 && len(rest) == 0
	if s.Seed == 0 {
		s.Seed = uint64(time.Now().UnixNano())
	}
	fmt.Fprintf(order, "seed %d (-seed: the pairs' start order)\n", s.Seed)
	var all bytes.Buffer
	round := 0
	msg := ""
	next, err := startDuetPair(ctx, s, 1)
	if err != nil {
		return err
	}
	defer func() { killDuetPair(next) }()
	for i := 0; i < s.Pairs; i++ {
		start := time.Now()
		cur := next
		next = [2]*duetProc{}
		if s.Overlap && i+1 < s.Pairs {
			if next, err = startDuetPair(ctx, s, i+2); err != nil {
				killDuetPair(cur)
				return err
			}
		}
		var pb bytes.Buffer
		outs, r, err := runDuetPair(ctx, s, i+1, cur, &pb, round)
		round = r
		o := startOrder(s.Seed, i+1)
		fmt.Fprintf(order, "pair %d duet, %s started first\n", i+1, o[0])
		bf.Write(pb.Bytes())
		all.Write(pb.Bytes())
		for side, out := range outs {
			files[side].Write(out.stdout)
			appendFile(filepath.Join(s.OutDir, abtest.Side(side).String()+".log"), out.stderr)
		}
		if err != nil {
			return fmt.Errorf("pair %d: %w", i+1, err)
		}
		for side, out := range outs {
			rs, err := abtest.ReadResults(bytes.NewReader(out.stdout), s.Bins[side])
			if err != nil {
				return fmt.Errorf("pair %d, %s side: %w", i+1, abtest.Side(side), err)
			}
			if len(rs.Keys) == 0 {
				return fmt.Errorf("pair %d, %s side: %s ran no benchmark matching -bench %q%s", i+1, abtest.Side(side), s.Bins[side], s.Bench, cmdout.Tail(out.stdout, tailLines))
			}
		}
		bs, err := readBursts(bytes.NewReader(all.Bytes()))
		if err != nil {
			return err
		}
		oldR, newR, err := readSides(sideFile(s.OutDir, abtest.Old), sideFile(s.OutDir, abtest.New))
		if err != nil {
			return err
		}
		pairs, err := pairsOf(s.OutDir)
		if err != nil {
			return err
		}
		fs := decideMetrics(rule, duetMetrics(bs, pairs, oldR, newR, covered))
		d := abtest.Overall(fs)
		fmt.Fprintf(progress, "rdmaab: duet pair %d/%d ran in %.1f s: %s\n", i+1, s.Pairs, time.Since(start).Seconds(), d)
		msg = fmt.Sprintf("ran %d duet pairs (-count %d); the paired verdict on %s: %s", i+1, s.Pairs, strings.Join(covered, ","), d)
		// Stop once the gate is settled: a metric decided "different"
		// while another is still open does not settle it.
		if out, _ := rule.Gate(fs); canStop && out != abtest.GateUndecided && i+1 < s.Pairs {
			msg = fmt.Sprintf("stopped after %d duet pairs of at most %d (-count): the paired verdict on %s is %s", i+1, s.Pairs, strings.Join(covered, ","), d)
			break
		}
		if !s.Overlap && i+1 < s.Pairs {
			if next, err = startDuetPair(ctx, s, i+2); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(filepath.Join(s.OutDir, "stop.txt"), []byte(msg+"\n"), 0o644)
}

// runArgs is the test binary's command line for one repetition.
func runArgs(s *Spec) []string {
	args := []string{"-test.run=^$", "-test.bench=" + s.Bench, "-test.count=1",
		"-test.timeout=" + s.RunTimeout.String()}
	if s.Benchtime != "" {
		args = append(args, "-test.benchtime="+s.Benchtime)
	}
	return append(args, s.TestArgs...)
}
