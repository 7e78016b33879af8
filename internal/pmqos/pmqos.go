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
	"time"
)

// Device is the kernel's CPU latency request file.
const Device = "/dev/cpu_dma_latency"

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
