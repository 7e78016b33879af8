// Package noise is a reproducible co-tenant: a busy loop on one CPU,
// switched on and off at random intervals drawn from a seeded generator,
// the noise that make validate-ab injects on the host so that its result
// does not depend on the day's neighbours.
package noise

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/rdmabench/rdmabench/env"
)

// A Phase is one stretch of the schedule: busy or idle for Len.
type Phase struct {
	Busy bool
	Len  time.Duration
}

// Schedule returns the first n phases for seed: alternately busy and
// idle (busy first), each lasting a uniform draw from [lo, hi].
func Schedule(seed uint64, lo, hi time.Duration, n int) []Phase {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]Phase, n)
	for i := range out {
		out[i] = Phase{Busy: i%2 == 0, Len: lo + time.Duration(r.Int64N(int64(hi-lo)+1))}
	}
	return out
}

// Check validates the bounds.
func Check(lo, hi time.Duration) error {
	if lo <= 0 || hi < lo {
		return fmt.Errorf("noise intervals %v..%v: want 0 < min <= max, e.g. -min 100ms -max 500ms", lo, hi)
	}
	return nil
}

// Run follows the schedule until ctx ends: busy phases spin on a thread
// pinned to cpu (the zero CPU: not pinned), idle phases sleep. onPhase, if not nil,
// is called as each phase ends. It returns the time spent busy and idle.
func Run(ctx context.Context, seed uint64, lo, hi time.Duration, cpu env.CPU, onPhase func(i int, p Phase)) (busy, idle time.Duration, err error) {
	if err := Check(lo, hi); err != nil {
		return 0, 0, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cpu.Pin(0); err != nil {
		return 0, 0, fmt.Errorf("pinning the noise: %w", err)
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := 0; ctx.Err() == nil; i++ {
		p := Phase{Busy: i%2 == 0, Len: lo + time.Duration(r.Int64N(int64(hi-lo)+1))}
		end := time.Now().Add(p.Len)
		if p.Busy {
			for time.Now().Before(end) && ctx.Err() == nil {
				for range 10000 { // spin between clock reads
				}
			}
			busy += p.Len
		} else {
			t := time.NewTimer(p.Len)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			idle += p.Len
		}
		if onPhase != nil && ctx.Err() == nil {
			onPhase(i, p)
		}
	}
	return busy, idle, nil
}
