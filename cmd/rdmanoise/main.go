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
	cpu := flag.Int("cpu", 1, "host CPU to load; -1: not pinned")
	dur := flag.Duration("for", 0, "stop after this long; 0: until killed")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}
	var pin env.CPU // -cpu -1: the zero CPU, not pinned
	if *cpu >= 0 {
		pin = env.PinTo(*cpu)
	}
	busy, idle, err := noise.Run(ctx, *seed, *lo, *hi, pin, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "noise:", err)
		os.Exit(2)
	}
	fmt.Printf("noise: seed %d, %v busy, %v idle on CPU %v\n", *seed, busy.Round(time.Millisecond), idle.Round(time.Millisecond), pin)
}
