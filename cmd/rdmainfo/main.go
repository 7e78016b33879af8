// Command rdmainfo lists the RDMA devices rdmabench can use: each device's
// firmware, ports, MTUs and first GID entries, with the GID the benchmarks
// would pick marked (perftest's choice: RoCE v2 over IPv4 first). Like
// ibv_devinfo -v and show_gids in one, limited to what moves latency.
//
//	rdmainfo [-q] [-gids N]
//	rdmainfo -place [-vm]
//
// It exits 0 when a device is usable (the one RDMABENCH_DEVICE names, or
// any with an active port), 1 when none is; with -q it prints nothing, so
// scripts can ask "is there RDMA here?".
//
// With -place it says where make bench runs: it prints "local" or "vm" on
// stdout and why on stderr, and exits 0; it exits 1, with the reason,
// when an RDMABENCH_ variable names a device, port or peer that cannot be
// used here. -vm forces "vm" (make bench VM=1).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/verbs"
)

func main() {
	quiet := flag.Bool("q", false, "print nothing; only the exit status says whether a device is usable")
	ngids := flag.Int("gids", 4, "GID table entries to show per port (the default entry is shown wherever it is)")
	place := flag.Bool("place", false, "print where make bench runs: local or vm")
	forceVM := flag.Bool("vm", false, "with -place: always the VM")
	flag.Parse()
	if *place {
		os.Exit(runPlace(os.Stdout, os.Stderr, *forceVM))
	}
	out := io.Writer(os.Stdout)
	if *quiet {
		out = io.Discard
	}
	os.Exit(run(out, *ngids))
}

func run(w io.Writer, ngids int) int {
	c, err := env.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rdmainfo:", err)
		return 2
	}
	devs, err := verbs.Devices()
	if err != nil || len(devs) == 0 {
		fmt.Fprintf(w, "no RDMA devices (%v); make bench and make test use the soft-RoCE VM instead\n", err)
		return 1
	}
	for _, d := range devs {
		describe(w, d, ngids)
	}
	dev, err := env.Usable(verbs.Probe{}, c)
	if err != nil {
		fmt.Fprintln(w, "no usable device:", err)
		return 1
	}
	fmt.Fprintln(w, "benchmarks use:", dev)
	return 0
}

func describe(w io.Writer, d verbs.DeviceInfo, ngids int) {
	ctx, err := verbs.Open(d.Name)
	if err != nil {
		fmt.Fprintf(w, "%s: %v\n", d.Name, err)
		return
	}
	defer ctx.Close()
	a, err := ctx.Query()
	if err != nil {
		fmt.Fprintf(w, "%s: %v\n", d.Name, err)
		return
	}
	fmt.Fprintf(w, "%s: fw %s, vendor %#x part %d, node %v, atomics %v, max inline %d\n",
		d.Name, a.FirmwareVersion, a.VendorID, a.VendorPartID, d.NodeType, a.AtomicCap, a.MaxInlineData)
	for p := 1; p <= int(a.PhysPortCount); p++ {
		pa, err := ctx.QueryPort(uint8(p))
		if err != nil {
			fmt.Fprintf(w, "  port %d: %v\n", p, err)
			continue
		}
		fmt.Fprintf(w, "  port %d: %v, %v, active MTU %v (max %v), LID %d\n", p, pa.State, pa.LinkLayer, pa.ActiveMTU, pa.MaxMTU, pa.LID)
		gids, err := ctx.GIDs(uint8(p), 0)
		if err != nil {
			fmt.Fprintf(w, "    GIDs: %v\n", err)
			continue
		}
		best, _ := verbs.BestGID(gids)
		for _, g := range gids {
			if g.Index >= ngids && g.Index != best.Index {
				continue
			}
			mark := ""
			if g.Index == best.Index && !best.IsZero() {
				mark = "  <- default (RDMABENCH_GID_INDEX overrides)"
			}
			fmt.Fprintf(w, "    GID %d: %v %v%s\n", g.Index, g.Type, g, mark)
		}
	}
}

// runPlace is rdmainfo -place.
func runPlace(stdout, stderr io.Writer, forceVM bool) int {
	c, err := env.Load()
	if err != nil {
		fmt.Fprintln(stderr, "rdmainfo:", err)
		return 1
	}
	var dev string
	var devErr error
	if !forceVM {
		dev, devErr = env.Usable(verbs.Probe{}, c)
	}
	place, why, err := choosePlace(forceVM, c, dev, devErr)
	if err != nil {
		fmt.Fprintln(stderr, "make bench:", err)
		return 1
	}
	fmt.Fprintln(stderr, why)
	fmt.Fprintln(stdout, place)
	return 0
}
