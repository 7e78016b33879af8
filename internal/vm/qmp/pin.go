// Package qmp speaks QEMU's machine protocol (QMP) to find each vCPU's host
// thread, and pins those threads to host CPUs.
package qmp

// Why pin: less drift between boots. Under TCG each vCPU is a host thread (QEMU's
// multi-threaded TCG); left to the host scheduler, the two vCPUs that
// busy-poll for the benchmark (the guest's last two, where rdmalat pins its
// initiator and responder) sometimes share one host CPU and sometimes not,
// and that placement differs from boot to boot. -pin fixes it: QEMU gets a
// QMP socket, query-cpus-fast gives each vCPU's thread id, and vCPU i is
// pinned to host CPU i mod N of the N CPUs rxevm may use, so the guest's
// last two vCPUs land on different host CPUs whenever there are two.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/env"
)

// ParsePin parses -pin: "auto" (the host CPUs rxevm may run on), "none", or
// a list of host CPUs "0,1" (env.ParseCPUList). It returns nil for none.
func ParsePin(flagValue string) ([]int, error) {
	switch flagValue {
	case "none", "off", "":
		return nil, nil
	case "auto":
		cpus, err := env.AllowedCPUs()
		if err != nil {
			return nil, fmt.Errorf("-pin auto: %w", err)
		}
		return cpus, nil
	}
	cpus, err := env.ParseCPUList(flagValue)
	if err != nil {
		return nil, fmt.Errorf("-pin %q: %v; want auto, none or host CPU numbers like 0,1 or 0-3", flagValue, err)
	}
	return cpus, nil
}

// Socket is where QEMU listens for QMP in the run's temporary directory.
func Socket(tmp string) string { return filepath.Join(tmp, "qmp.sock") }

// VCPUThreads asks QEMU over QMP for each vCPU's host thread id, in vCPU
// order. It waits up to the context's deadline for the socket.
func VCPUThreads(ctx context.Context, sock string) ([]int, error) {
	var conn net.Conn
	var err error
	for {
		var d net.Dialer
		if conn, err = d.DialContext(ctx, "unix", sock); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("QMP socket %s: %w", sock, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	r := bufio.NewReader(conn)
	// The greeting, then the answer to each command; events may come in
	// between and are skipped.
	read := func() (json.RawMessage, error) {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return nil, fmt.Errorf("QMP: %w", err)
			}
			var m struct {
				QMP    json.RawMessage        `json:"QMP"`
				Return json.RawMessage        `json:"return"`
				Error  *struct{ Desc string } `json:"error"`
			}
			if err := json.Unmarshal(line, &m); err != nil {
				return nil, fmt.Errorf("QMP: %w: %q", err, line)
			}
			switch {
			case m.Error != nil:
				return nil, fmt.Errorf("QMP: %s", m.Error.Desc)
			case m.QMP != nil:
				return m.QMP, nil
			case m.Return != nil:
				return m.Return, nil
			}
		}
	}
	if _, err := read(); err != nil {
		return nil, err
	}
	var ret json.RawMessage
	for _, cmd := range []string{`{"execute":"qmp_capabilities"}`, `{"execute":"query-cpus-fast"}`} {
		if _, err := conn.Write([]byte(cmd + "\n")); err != nil {
			return nil, fmt.Errorf("QMP: %w", err)
		}
		if ret, err = read(); err != nil {
			return nil, err
		}
	}
	var cpus []struct {
		Index  int `json:"cpu-index"`
		Thread int `json:"thread-id"`
	}
	if err := json.Unmarshal(ret, &cpus); err != nil {
		return nil, fmt.Errorf("QMP query-cpus-fast: %w", err)
	}
	tids := make([]int, len(cpus))
	for _, c := range cpus {
		if c.Index < 0 || c.Index >= len(tids) {
			return nil, fmt.Errorf("QMP query-cpus-fast: cpu-index %d of %d", c.Index, len(cpus))
		}
		tids[c.Index] = c.Thread
	}
	return tids, nil
}

// PinVCPUs pins vCPU i's thread to host CPU hostCPUs[i mod N] and returns
// the placement as text ("0->0 1->1 2->0 3->1").
func PinVCPUs(tids, hostCPUs []int) (string, error) {
	if len(hostCPUs) == 0 {
		return "", errors.New("no host CPUs to pin to")
	}
	seen := map[int]bool{}
	var parts []string
	for i, tid := range tids {
		if seen[tid] {
			return "", fmt.Errorf("vCPUs share host thread %d (single-threaded TCG): nothing to pin", tid)
		}
		seen[tid] = true
		cpu := hostCPUs[i%len(hostCPUs)]
		if err := env.PinTo(cpu).Pin(tid); err != nil {
			return "", fmt.Errorf("pinning vCPU %d (thread %d) to CPU %d: %w", i, tid, cpu, err)
		}
		parts = append(parts, fmt.Sprintf("%d->%d", i, cpu))
	}
	return strings.Join(parts, " "), nil
}

// PinAfterStart pins the vCPU threads of a QEMU just started with -qmp on
// sock. A failure is logged, not fatal: the run goes on unpinned.
func PinAfterStart(ctx context.Context, sock string, hostCPUs []int, logf func(format string, args ...any)) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tids, err := VCPUThreads(ctx, sock)
	if err == nil {
		var placed string
		if placed, err = PinVCPUs(tids, hostCPUs); err == nil {
			logf("pinned vCPU threads to host CPUs: %s", placed)
			return
		}
	}
	logf("not pinning vCPUs: %v", err)
}
