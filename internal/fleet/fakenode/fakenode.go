//go:build linux

// Package fakenode lets a test binary double as every program of a fleet
// run (os/exec's helper-process pattern): run through a link named srun,
// rdmafleet, rdmapeer or rdmabench.test, Run plays that part instead of
// running tests. The fakes talk over real TCP, so the agents'
// orchestration runs as on a cluster, every node on 127.0.0.1:
//
//   - srun starts the command once per node of --nodelist, concurrently,
//     with SLURM_PROCID, SLURM_STEP_NODELIST and SLURMD_NODENAME set;
//   - rdmapeer listens, tells each client its latency (10 us, 30 us for a
//     pair with $FAKE_SLOW), its node and the devices it serves (-device,
//     else $RDMABENCH_DEVICE), and answers until SIGINT;
//   - rdmabench.test asks its RDMABENCH_PEER for the latency, checks the
//     peer is still there, and prints benchmark results in the real format;
//     with rails (RDMABENCH_DEVICE=a,b) one result per rail, /rail=DEV, each
//     rail 1 us slower than the one before, after checking that the peer
//     serves a device of the rail's name; with RDMABENCH_LOAD, each result
//     has a load-MB/s (100 a pair at 10 us, 33.3 at 30 us, +1 a repetition).
//
// FAKE_HANG=SRC:DST makes that pair's benchmark hang; FAKE_KILL_SRC and
// FAKE_KILL_DST make that pair's benchmark or rdmapeer kill its agent
// with SIGKILL, as an operator or the OOM killer might.
package fakenode

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/childproc"
	"github.com/rdmabench/rdmabench/internal/fleet/control"
)

// Run plays the program os.Args[0] names, when it is one of the fakes,
// and exits; otherwise it returns, for the tests to run. rdmafleet is
// the command's own entry point, for the agents a fake srun starts (nil
// where the tests start no srun).
func Run(rdmafleet func(ctx context.Context, args []string) int) {
	code := -1
	switch filepath.Base(os.Args[0]) {
	case "srun":
		code = fakeSrun(os.Args[1:])
	case "rdmafleet":
		if rdmafleet != nil {
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			code = rdmafleet(ctx, os.Args[1:])
			stop()
		}
	case "rdmapeer":
		code = fakePeer(os.Args[1:])
	case "rdmabench.test":
		code = fakeBench(os.Args[1:])
	}
	if code >= 0 {
		os.Exit(code)
	}
}

// FreePortBase returns a port base whose first n ports are free now.
func FreePortBase(t testing.TB, n int) int {
	t.Helper()
	for try := 0; try < 50; try++ {
		base := 20000 + 2*rand.IntN(15000)
		var lns []net.Listener
		ok := true
		for p := base; p < base+n && ok; p++ {
			ln, err := net.Listen("tcp", ":"+strconv.Itoa(p))
			if err != nil {
				ok = false
				break
			}
			lns = append(lns, ln)
		}
		for _, ln := range lns {
			ln.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// Bin makes the links to the test binary in a new directory.
func Bin(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"srun", "rdmafleet", "rdmapeer", "rdmabench.test"} {
		if err := os.Symlink(exe, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func fakeSrun(args []string) int {
	var nodelist string
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "--"); i++ {
		if v, ok := strings.CutPrefix(args[i], "--nodelist="); ok {
			nodelist = v
		}
	}
	nodes := strings.Split(nodelist, ",")
	// The job's token travels in the environment only (docs/security.md):
	// a command line is readable by every user of the node.
	if tok := os.Getenv(control.EnvToken); len(tok) < 32 || strings.Contains(strings.Join(args, " "), tok) {
		fmt.Fprintf(os.Stderr, "fake srun: want the job's token in %s and not on the command line\n", control.EnvToken)
		return 1
	}
	if nodelist == "" || i == len(args) {
		fmt.Fprintln(os.Stderr, "fake srun: want --nodelist=... and a command")
		return 1
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	status := 0
	for id, node := range nodes {
		cmd := exec.Command(args[i], args[i+1:]...)
		cmd.Env = append(os.Environ(), "SLURM_PROCID="+strconv.Itoa(id), "SLURM_STEP_NODELIST="+nodelist, "SLURMD_NODENAME="+node)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		childproc.Tie(cmd)
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake srun:", err)
			return 1
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				fmt.Fprintf(os.Stderr, "fake srun: task %d on %s: %v\n", id, node, err)
				mu.Lock()
				status = 1
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return status
}

func fakeLatency(src, dst string) int {
	if slow := os.Getenv("FAKE_SLOW"); slow != "" && (src == slow || dst == slow) {
		return 30000
	}
	return 10000
}

func fakePeer(args []string) int {
	fs := flag.NewFlagSet("rdmapeer", flag.ContinueOnError)
	listen := fs.String("listen", "", "")
	allow := fs.String("allow", "", "")
	devices := fs.String("device", os.Getenv("RDMABENCH_DEVICE"), "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *devices == "" {
		*devices = "default"
	}
	token := os.Getenv("RDMABENCH_PEER_TOKEN")
	if *allow == "" || token == "" || os.Getenv(control.EnvToken) != "" {
		fmt.Fprintf(os.Stderr, "rdmapeer: want -allow and RDMABENCH_PEER_TOKEN, and not the job's token (got -allow %q)\n", *allow)
		return 2
	}
	for _, a := range strings.Split(*allow, ",") {
		if net.ParseIP(a) == nil { // the source node's addresses, no prefix of others
			fmt.Fprintf(os.Stderr, "rdmapeer: -allow %q: want the source node's addresses\n", *allow)
			return 2
		}
	}
	if h, _, _ := net.SplitHostPort(*listen); h == "" {
		fmt.Fprintf(os.Stderr, "rdmapeer: -listen %q: want this node's own address\n", *listen)
		return 2
	}
	self := os.Getenv("SLURMD_NODENAME")
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rdmapeer:", err)
		return 1
	}
	fmt.Printf("rdmapeer listening on %s\n", ln.Addr())
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				rd := bufio.NewReader(conn)
				hello, _ := rd.ReadString('\n')
				var src, tok string
				fmt.Sscanf(hello, "hello %s %s", &src, &tok)
				if tok != token {
					fmt.Fprintln(conn, "wrong token")
					return
				}
				if os.Getenv("FAKE_KILL_DST") == src+":"+self {
					syscall.Kill(os.Getppid(), syscall.SIGKILL)
					time.Sleep(time.Hour) // until the parent-death signal
				}
				fmt.Fprintf(conn, "lat %d %s %s\n", fakeLatency(src, self), self, *devices)
				for {
					if _, err := rd.ReadString('\n'); err != nil {
						return
					}
					fmt.Fprintln(conn, "ok")
				}
			}()
		}
	}()
	<-sigc
	fmt.Fprintln(os.Stderr, "rdmapeer: stopped")
	return 0
}

func fakeBench(args []string) int {
	fs := flag.NewFlagSet("rdmabench.test", flag.ContinueOnError)
	fs.String("test.run", "", "")
	fs.String("test.bench", "", "")
	fs.String("test.benchtime", "", "")
	fs.Duration("test.timeout", 0, "")
	count := fs.Int("test.count", 1, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	self := os.Getenv("SLURMD_NODENAME")
	conn, err := net.Dial("tcp", os.Getenv("RDMABENCH_PEER"))
	if err != nil {
		fmt.Printf("--- FAIL: BenchmarkRDMAWrite\n    cannot reach rdmapeer at %s\n", os.Getenv("RDMABENCH_PEER"))
		return 1
	}
	defer conn.Close()
	fmt.Fprintf(conn, "hello %s %s\n", self, os.Getenv("RDMABENCH_PEER_TOKEN"))
	rd := bufio.NewReader(conn)
	var lat int
	var dst, served string
	if _, err := fmt.Fscanf(rd, "lat %d %s %s\n", &lat, &dst, &served); err != nil {
		fmt.Printf("--- FAIL: BenchmarkRDMAWrite\n    rdmapeer went away: %v\n", err)
		return 1
	}
	rails := []string{""} // one device: names without a rail
	if dev := os.Getenv("RDMABENCH_DEVICE"); strings.Contains(dev, ",") {
		rails = strings.Split(dev, ",")
	}
	for _, r := range rails {
		if r != "" && !slices.Contains(strings.Split(served, ","), r) {
			fmt.Printf("--- FAIL: BenchmarkRDMAWrite\n    rdmapeer: device %q: this rdmapeer serves %s\n", r, served)
			return 1
		}
	}
	pair := self + ":" + dst
	if os.Getenv("FAKE_HANG") == pair {
		time.Sleep(time.Hour)
	}
	if os.Getenv("FAKE_KILL_SRC") == pair {
		syscall.Kill(os.Getppid(), syscall.SIGKILL)
		time.Sleep(time.Hour)
	}
	fmt.Fprintln(conn, "still there?")
	if _, err := rd.ReadString('\n'); err != nil {
		fmt.Printf("--- FAIL: BenchmarkRDMAWrite\n    rdmapeer went away: %v\n", err)
		return 1
	}
	fmt.Printf("goos: linux\ngoarch: amd64\npkg: github.com/rdmabench/rdmabench\ncpu: fake CPU of %s\n", self)
	fmt.Printf("rdmabench-mode: two-node\nrdma-device: rxe0\nkernel: fake-%s\n", self)
	load := ""
	if v := os.Getenv("RDMABENCH_LOAD"); v != "" && v != "0" {
		fmt.Printf("rdmabench-load: %s\n", v) // unparsed: the fleet writes its own line
		load = "\t %.1f load-MB/s"
	}
	for ri, r := range rails {
		name := "BenchmarkRDMAWrite"
		if r != "" {
			name += "/rail=" + r
		}
		for i := range *count {
			for _, size := range []int{2, 4096} {
				v := lat + 1000*ri + 100*i + 2*size
				fmt.Printf("%s/size=%d-4   \t    1000\t %d ns/op\t %d min-ns\t %d p50-ns\t %d p99-ns",
					name, size, v+50, v-500, v, 3*v)
				if load != "" { // a slower pair streams less: 1e6/lat MB/s, +1 a repetition
					fmt.Printf(load, 1e6/float64(lat)+float64(i))
				}
				fmt.Printf("\t 0 B/op\t 0 allocs/op\n")
			}
		}
	}
	fmt.Println("PASS")
	return 0
}
