package perftestcmp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/cmdout"
	"github.com/rdmabench/rdmabench/internal/perftest"
	"github.com/rdmabench/rdmabench/internal/schedstat"
)

// perftestArgs returns the perftest tool's options, the same for the
// server and the client (perftest requires it). -F: under emulation
// perftest finds conflicting CPU frequencies and, without -F, may refuse
// to report. A tool of one fixed size (atomics) takes no -s; read and
// atomic take no -I.
func perftestArgs(c *Config, t *Tool, size, port int) []string {
	a := []string{"-d", c.Device, "-x", strconv.Itoa(c.GIDIndex)}
	if t.size == 0 {
		a = append(a, "-s", strconv.Itoa(size))
	}
	a = append(a, "-n", strconv.Itoa(c.Iters), "-p", strconv.Itoa(port))
	if c.rxDepth > 0 {
		a = append(a, "-r", strconv.Itoa(c.rxDepth))
	}
	if t.inline {
		a = append(a, "-I", strconv.Itoa(c.inlineFor(t)))
	}
	a = append(a, "-F", "-U") // -U: every sample, for the figures computed here
	return append(a, t.ptArgs...)
}

// A perftestRun is the output of one server and client pair.
type perftestRun struct {
	args           []string
	server, client []byte                  // standard output then standard error
	report         *perftest.LatencyReport // the client's, once parsed
	sched          schedstat.Stats         // the client's
}

// runPerftest runs tool t's perftest server pinned to our responder's CPU,
// waits until it listens on port, runs the client pinned to our
// initiator's CPU against it and returns the client's result row (its
// report holds the -U samples). Both processes are killed when c.Timeout
// passes. The server's table (it
// measures too) is kept in the raw output only.
func runPerftest(ctx context.Context, c *Config, t *Tool, size, port int) (perftest.LatencyRow, *perftestRun, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	run := &perftestRun{args: perftestArgs(c, t, size, port)}
	writeLat := t.perftest // the program, in messages
	fail := func(format string, args ...any) (perftest.LatencyRow, *perftestRun, error) {
		err := fmt.Errorf(format, args...)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%s -s %d: timed out after %s, killed: %w", writeLat, size, c.Timeout, err)
		}
		return perftest.LatencyRow{}, run, err
	}

	var srvOut, srvErr bytes.Buffer
	srv := exec.CommandContext(ctx, c.perftestPaths[t.perftest], run.args...)
	srv.Stdout, srv.Stderr = &srvOut, &srvErr
	srv.Env = c.childEnv()
	srv.WaitDelay = 5 * time.Second
	if err := startPinned(srv, c.perftestCPU(1)); err != nil {
		return fail("starting the %s server: %w", writeLat, err)
	}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Wait() }()
	stopServer := func() error {
		cancel() // kills it if it still runs
		err := <-srvDone
		run.server = append(srvOut.Bytes(), srvErr.Bytes()...)
		return err
	}

	if err := waitListen(ctx, port, srvDone); err != nil {
		if errors.Is(err, errServerExited) {
			// srvDone has been drained by waitListen.
			run.server = append(srvOut.Bytes(), srvErr.Bytes()...)
			return fail("%s server: %w%s", writeLat, err, cmdout.Tail(run.server, tailLines))
		}
		stopServer()
		return fail("%s server: %w%s", writeLat, err, cmdout.Tail(run.server, tailLines))
	}

	var cliOut, cliErr bytes.Buffer
	cli := exec.CommandContext(ctx, c.perftestPaths[t.perftest], append(run.args, c.ServerAddr)...)
	cli.Stdout, cli.Stderr = &cliOut, &cliErr
	cli.Env = c.childEnv()
	cli.WaitDelay = 5 * time.Second
	cliRunErr := startPinned(cli, c.perftestCPU(0))
	if cliRunErr == nil {
		stop := c.watchSched(cli.Process.Pid)
		cliRunErr = cli.Wait()
		run.sched = stop()
	}
	run.client = append(cliOut.Bytes(), cliErr.Bytes()...)
	if cliRunErr != nil {
		stopServer()
		return fail("%s client: %w%s", writeLat, cliRunErr, cmdout.Tail(run.client, tailLines))
	}
	// The server ends on its own right after the client; the deadline
	// still holds.
	select {
	case err := <-srvDone:
		run.server = append(srvOut.Bytes(), srvErr.Bytes()...)
		if err != nil {
			return fail("%s server: %w%s", writeLat, err, cmdout.Tail(run.server, tailLines))
		}
	case <-ctx.Done():
		stopServer()
		return fail("%s server did not exit after the client%s", writeLat, cmdout.Tail(run.server, tailLines))
	}

	rep, err := perftest.ParseLatency(bytes.NewReader(cliOut.Bytes()))
	if err != nil {
		return fail("%s client: %w%s", writeLat, err, cmdout.Tail(run.client, tailLines))
	}
	run.report = rep
	row, ok := rep.Row(size)
	if !ok {
		return fail("%s client: no result row for %d bytes", writeLat, size)
	}
	if len(rep.Samples) == 0 || rep.SampleUnit != "usec" {
		return fail("%s client: no -U samples in microseconds (%d in %q)", writeLat, len(rep.Samples), rep.SampleUnit)
	}
	return row, run, nil
}

var errServerExited = errors.New("exited before listening")

// waitListen waits until a TCP socket listens on port, polling the
// kernel's socket tables (a probe connection would be taken by perftest's
// server for its client). It fails when the server exits first or ctx
// ends.
func waitListen(ctx context.Context, port int, exited <-chan error) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := listening(port)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case err := <-exited:
			if err != nil {
				return fmt.Errorf("%w: %v", errServerExited, err)
			}
			return errServerExited
		case <-ctx.Done():
			return fmt.Errorf("not listening on port %d: %w", port, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// listening reports whether a TCP socket (IPv4 or IPv6) listens on port,
// from /proc/net/tcp and /proc/net/tcp6.
func listening(port int) (bool, error) {
	var errs []error
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if listensOn(b, port) {
			return true, nil
		}
	}
	if len(errs) == 2 {
		return false, fmt.Errorf("cannot tell whether port %d listens: %w", port, errors.Join(errs...))
	}
	return false, nil
}

// listensOn reports whether a /proc/net/tcp table has a socket in state
// LISTEN (0A) on port. Lines read "sl local_address rem_address st ...",
// the local address as hex "ADDR:PORT".
func listensOn(table []byte, port int) bool {
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[3] != "0A" {
			continue
		}
		_, p, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if v, err := strconv.ParseUint(p, 16, 16); err == nil && int(v) == port {
			return true
		}
	}
	return false
}

// freePort returns the first port from start on that nothing listens on.
func freePort(start int) int {
	for p := start; p < start+1000 && p < 65536; p++ {
		if ok, err := listening(p); err == nil && !ok {
			return p
		}
	}
	return start
}
