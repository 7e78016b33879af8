// Command rdmanoise is the co-tenant make validate-ab injects on the host:
// a busy loop on one CPU switched on and off at seeded random intervals
// (internal/noise), so a validation's figure does not depend on the day's
// neighbours. It runs until killed or -for ends.
//
//	rdmanoise -seed 1 -min 100ms -max 500ms -cpu 1
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/noise"
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of the on/off schedule")
	lo := flag.Duration("min", 100*time.Millisecond, "shortest phase")
	hi := flag.Duration("max", 500*time.Millisecond, "longest phase")
	cpu := flag.String("cpu", "1", "host `CPU` to load, or none")
	dur := flag.Duration("for", 0, "stop after this long; 0: until killed")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}
	pin, err := parseCPU(*cpu)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rdmanoise:", err)
		os.Exit(2)
	}
	busy, idle, err := noise.Run(ctx, *seed, *lo, *hi, pin, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "noise:", err)
		os.Exit(2)
	}
	fmt.Printf("noise: seed %d, %v busy, %v idle on CPU %v\n", *seed, busy.Round(time.Millisecond), idle.Round(time.Millisecond), pin)
}

// parseCPU reads -cpu: one CPU this process may use, or none.
func parseCPU(v string) (env.CPU, error) {
	if v == "none" {
		return env.CPU{}, nil
	}
	cpus, err := env.ParseCPUList(v)
	if err == nil && len(cpus) != 1 {
		err = fmt.Errorf("%d CPUs", len(cpus))
	}
	if err != nil {
		return env.CPU{}, fmt.Errorf("-cpu %q: %v; want one CPU, such as -cpu 1, or -cpu none", v, err)
	}
	if err := env.CheckCPUs("-cpu", cpus); err != nil {
		return env.CPU{}, err
	}
	return env.PinTo(cpus[0]), nil
}
