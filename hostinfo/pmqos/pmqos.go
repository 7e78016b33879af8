// Package pmqos holds a CPU wake-up latency limit through Linux PM QoS
// (/dev/cpu_dma_latency) while a measurement runs: with the limit at 0 the
// cpuidle governors keep every idle CPU polling, the modern equivalent of
// booting with "nohalt" or idle=poll, undone the moment the file closes.
//
// The kernel keeps a request only while its file is open, so a Request
// must stay reachable until Close: a dropped Request's file is closed by
// the garbage collector, which ends the hold.
package pmqos

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Device is the kernel's CPU latency request file.
const Device = "/dev/cpu_dma_latency"

// EnvVar turns a hold on for the benchmarks: "1" holds the limit at 0, a
// duration ("20us") holds that limit, "" or "0" leaves PM QoS alone.
const EnvVar = "RDMABENCH_PMQOS"

// Request is one held latency limit.
type Request struct {
	f     *os.File
	limit time.Duration
}

// Hold asks the kernel to keep every CPU's wake-up latency at or below
// limit (rounded down to microseconds; 0 allows no idle state but
// polling) until Close. It needs root (the file is mode 0600).
func Hold(limit time.Duration) (*Request, error) { return HoldAt(Device, limit) }

// HoldAt is Hold on another file, for tests on a fake one.
func HoldAt(path string, limit time.Duration) (*Request, error) {
	if limit < 0 || limit > time.Duration(1<<31-1)*time.Microsecond {
		return nil, fmt.Errorf("pmqos: limit %v out of range (0 to 2147s)", limit)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("pmqos: holding the CPU latency limit needs root: %w", err)
		}
		return nil, fmt.Errorf("pmqos: %w", err)
	}
	us := uint32(limit / time.Microsecond)
	if _, err := f.Write(binary.NativeEndian.AppendUint32(nil, us)); err != nil {
		f.Close()
		return nil, fmt.Errorf("pmqos: %w", err)
	}
	return &Request{f: f, limit: time.Duration(us) * time.Microsecond}, nil
}

// Limit returns the limit held.
func (r *Request) Limit() time.Duration { return r.limit }

// Close ends the hold. It is safe on a nil Request and more than once.
func (r *Request) Close() error {
	if r == nil || r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	if err != nil {
		return fmt.Errorf("pmqos: %w", err)
	}
	return nil
}

// FromEnv starts the hold that EnvVar asks for, read through getenv: nil
// and no error when it asks for none.
func FromEnv(getenv func(string) string) (*Request, error) {
	v := strings.TrimSpace(getenv(EnvVar))
	switch v {
	case "", "0":
		return nil, nil
	case "1":
		return Hold(0)
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return nil, fmt.Errorf("%s=%s: want 1 (hold the CPU wake-up latency limit at 0), a limit such as 20us, or 0 (off)", EnvVar, strconv.Quote(v))
	}
	r, err := Hold(d)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", EnvVar, v, err)
	}
	return r, nil
}
