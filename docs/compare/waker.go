//go:build ignore

// waker.go: a process that does nothing but wake up on one CPU every
// -period, to test whether such wake-ups on the VM's housekeeping vCPUs
// lengthen the polling side's stalls. Under TCG on a 2-CPU host the two
// busy-polling vCPUs already hold both host CPUs, so every wake of another
// vCPU takes host time from one of them. perftest's client and server are
// alone on the guest; our benchmark process also carries the Go runtime's
// threads, moved to the housekeeping vCPUs while it measures. Run it beside
// perftest (docs/compare.md, "What our process adds"):
//
//	go build -o bin/waker docs/compare/waker.go
//	bin/waker -cpu 0 -period 10ms &
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	cpu := flag.Int("cpu", 0, "CPU to wake on")
	period := flag.Duration("period", 10*time.Millisecond, "time between wake-ups")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(*cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		fmt.Fprintln(os.Stderr, "waker:", err)
		os.Exit(2)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	ts := unix.NsecToTimespec(period.Nanoseconds())
	wakes := 0
	start := time.Now()
	for {
		select {
		case <-stop:
			fmt.Printf("waker: %d wake-ups on CPU %d in %.1f s\n", wakes, *cpu, time.Since(start).Seconds())
			return
		default:
		}
		unix.Nanosleep(&ts, nil)
		wakes++
	}
}
