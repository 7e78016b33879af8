//go:build ignore

// lanes.go: where the soft-RoCE VM's per-process latency offset lives.
// process builds several loopback pairs ("lanes", each its own queue
// pairs, completion queues and registered buffers) and measures them in
// turn, bursts of round trips in a shuffled order, so that every lane sees
// the same host. If the lanes of one process differ as much as processes
// do, the offset belongs to the verbs objects (their memory), not to the
// process. Run it in the VM, several times:
//
//	go build -o lanes docs/validate-ab/lanes.go
//	bin/rxevm ./lanes -lanes 6 -rounds 20
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"

	"github.com/rdmabench/rdmabench/rdmalat"
)

func main() {
	dev := flag.String("device", "rxe0", "device")
	lanes := flag.Int("lanes", 6, "loopback pairs in this process")
	rounds := flag.Int("rounds", 20, "bursts per lane")
	burst := flag.Int("burst", 200, "round trips per burst")
	size := flag.Int("size", 2, "message size")
	threads := flag.Bool("threads", false, "one pair, and each lane an OS thread of its own that runs that lane's bursts (initiator side)")
	flag.Parse()
	var ps []*rdmalat.Pair
	nPairs := *lanes
	if *threads {
		nPairs = 1
	}
	for range nPairs {
		p, err := rdmalat.NewLoopback(rdmalat.LoopbackConfig{
			Endpoint: rdmalat.EndpointConfig{Device: *dev, GIDIndex: rdmalat.GIDBest, Inline: rdmalat.InlinePerftest, MaxSize: 4096},
			CPUs:     [2]int{2, 3},
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer p.Close()
		ps = append(ps, p)
	}
	med := make([][]float64, *lanes)
	order := make([]int, *lanes)
	for i := range order {
		order[i] = i
	}
	// With -threads, lane l's bursts run on thread l: a goroutine locked
	// to its OS thread for good, so that no other goroutine runs there.
	work := make([]chan func(), *lanes)
	if *threads {
		for l := range work {
			work[l] = make(chan func())
			go func() {
				runtime.LockOSThread() // never unlocked: the thread is this lane's
				for f := range work[l] {
					f()
				}
			}()
		}
	}
	on := func(l int, f func()) {
		if !*threads {
			f()
			return
		}
		done := make(chan struct{})
		work[l] <- func() { f(); close(done) }
		<-done
	}
	for r := 0; r < *rounds; r++ {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, l := range order {
			on(l, func() { med[l] = append(med[l], burstOn(ps[min(l, len(ps)-1)], *size, *burst)) })
		}
	}
	report(med)
}

// burstOn runs one burst on p and returns its median round trip.
func burstOn(p *rdmalat.Pair, size, burst int) float64 {
	run, err := p.Start(size, 200)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := make([]float64, burst)
	for i := range s {
		v, err := run.Next()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		s[i] = float64(v)
	}
	run.Close()
	slices.Sort(s)
	return s[len(s)/2]
}

func report(med [][]float64) {
	// Each round centred on its mean over the lanes (the host's level that
	// round cancels); a lane's offset is the mean of its centred values,
	// with its standard error from the spread over rounds. chi2 adds the
	// squared offsets in units of their errors: about lanes-1 when the lanes
	// differ by noise alone.
	R := len(med[0])
	var chi2 float64
	for l := range med {
		var d []float64
		for r := 0; r < R; r++ {
			var c float64
			for k := range med {
				c += math.Log(med[k][r])
			}
			c /= float64(len(med))
			d = append(d, math.Log(med[l][r])-c)
		}
		m, sd := meanSD(d)
		se := sd / math.Sqrt(float64(R))
		sorted := slices.Clone(d)
		slices.Sort(sorted)
		md := sorted[len(sorted)/2]
		chi2 += (m / se) * (m / se)
		all := slices.Clone(med[l])
		slices.Sort(all)
		fmt.Printf("lane %d  median %6.0f ns  offset: mean %+5.2f%% ± %.2f%%, median %+5.2f%%\n", l, all[len(all)/2], 100*m, 100*se, 100*md)
	}
	fmt.Printf("chi2 %.1f on %d df (lanes differ beyond noise when far above)\n", chi2, len(med)-1)
}

func meanSD(x []float64) (float64, float64) {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	if len(x) < 2 {
		return m, 0
	}
	return m, math.Sqrt(s / float64(len(x)-1))
}
