package perftestcmp

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/texttest"
)

// The test binary doubles as fake perftest latency tests and a fake
// benchmark binary (os/exec's helper-process pattern): run through a link
// named ib_write_lat (ib_read_lat, ib_send_lat, ib_atomic_lat) or
// fake.test, it acts the part instead of running tests.
// The fakes speak perftest's TCP rendezvous far enough to need a real
// listening server, print tables in the real formats, and append each run
// to $FAKE_LOG so that the order can be checked. FAKE_MODE=hang-server
// makes the server hang after its client connects.
func TestMain(m *testing.M) {
	switch name := filepath.Base(os.Args[0]); name {
	case "ib_write_lat", "ib_read_lat", "ib_send_lat", "ib_atomic_lat":
		os.Exit(fakePerftest(name, os.Args[1:]))
	case "fake.test":
		os.Exit(fakeBench(os.Args[1:]))
	case "rdmapeer":
		os.Exit(fakePeer(os.Args[1:]))
	}
	goleak.VerifyTestMain(m) // fails the run when a test leaves a goroutine behind
}

func fakeLog(format string, args ...any) {
	if name := os.Getenv("FAKE_LOG"); name != "" {
		f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, format+"\n", args...)
			f.Close()
		}
	}
}

func fakePerftest(name string, args []string) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	connType := fs.String("c", "RC", "")
	atomicOp := fs.String("A", "", "")
	imm := new(bool)
	if os.Getenv("FAKE_NO_IMM") == "" { // FAKE_NO_IMM: an old perftest, like Debian's 4.5
		fs.BoolVar(imm, "write_with_imm", false, "")
	}
	fs.String("d", "", "")
	fs.Int("x", 0, "")
	defSize := 2
	if name == "ib_atomic_lat" {
		defSize = 8
	}
	size := fs.Int("s", defSize, "")
	iters := fs.Int("n", 1000, "")
	port := fs.Int("p", 18515, "")
	fs.Bool("F", false, "")
	fs.Int("I", 0, "")
	dump := fs.Bool("U", false, "")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	addr := fs.Arg(0)
	if addr == "" {
		fmt.Print("\n************************************\n* Waiting for client to connect... *\n************************************\n")
		ln, err := net.Listen("tcp", ":"+strconv.Itoa(*port))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		conn, err := ln.Accept()
		if err != nil {
			return 1
		}
		if os.Getenv("FAKE_MODE") == "hang-server" {
			time.Sleep(time.Hour)
		}
		io.Copy(io.Discard, conn)
	} else {
		conn, err := net.Dial("tcp", net.JoinHostPort(addr, strconv.Itoa(*port)))
		if err != nil {
			fmt.Fprintf(os.Stderr, "Couldn't connect to %s:%d\n", addr, *port)
			return 1
		}
		conn.Close()
		tag := name
		if *connType != "RC" {
			tag += " " + *connType
		}
		if *atomicOp != "" {
			tag += " " + *atomicOp
		}
		if *imm {
			tag += " imm"
		}
		fakeLog("perftest %s %d", tag, *size)
	}
	fakeCPULog("perftest %s", map[bool]string{true: "server", false: "client"}[addr == ""])
	dash := strings.Repeat("-", 87) + "\n"
	title := map[string]string{"ib_write_lat": "RDMA_Write", "ib_read_lat": "RDMA_Read", "ib_send_lat": "Send", "ib_atomic_lat": "Atomic FETCH_AND_ADD"}[name]
	fmt.Print(dash + "                    " + title + " Latency Test\n" +
		" Dual-port       : OFF\t\tDevice         : rxe0\n Mtu             : 1024[B]\n Link type       : Ethernet\n GID index       : 1\n Max inline data : 0[B]\n" + dash +
		" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n")
	// Figures grow with the size: t_typical = 10 + size/1000.
	typ := 10 + float64(*size)/1000
	if addr != "" && os.Getenv("FAKE_MODE") == "noclock-once" {
		marker := os.Getenv("FAKE_LOG") + ".noclock"
		if _, err := os.Stat(marker); err != nil {
			os.WriteFile(marker, nil, 0o644)
			fmt.Printf(" %-7d %d          inf            inf          inf      \t       inf         \t-nan   \t\tinf     \t\tinf    \n", *size, *iters)
			fmt.Print(dash)
			fmt.Fprintln(os.Stderr, "Correlation coefficient r^2: 0.832724 < 0.9")
			return 0
		}
	}
	if *dump && addr != "" {
		fmt.Print("#, usec\n")
		for i := 1; i < *iters; i++ {
			fmt.Printf("%d, %g\n", i, fakeSample(i, typ, 1, 1))
		}
		fmt.Print(dash + " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n")
	}
	fmt.Printf(" %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
		*size, *iters, typ-1, typ*50, typ, typ+1, 3.0, typ*3, typ*10)
	fmt.Print(dash)
	return 0
}

// fakeSample is sample i of a fake run in microseconds: typ*body, and
// every 20th typ*3*tail, so that p50 is typ*body and p99 typ*3*tail.
func fakeSample(i int, typ, body, tail float64) float64 {
	if i%20 == 0 {
		return typ * 3 * tail
	}
	return typ * body
}

// fakeCPULog appends what the process may run on to $FAKE_CPULOG.
func fakeCPULog(format string, args ...any) {
	name := os.Getenv("FAKE_CPULOG")
	if name == "" {
		return
	}
	b, _ := os.ReadFile("/proc/self/status")
	cpus := "?"
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			cpus = strings.TrimSpace(v)
		}
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintf(f, format+" on %s\n", append(args, cpus)...)
		f.Close()
	}
}

func fakeBench(args []string) int {
	iters := 0
	bench := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "-test.benchtime="); ok {
			iters, _ = strconv.Atoi(strings.TrimSuffix(v, "x"))
		}
		if v, ok := strings.CutPrefix(a, "-test.bench="); ok {
			first, _, _ := strings.Cut(v, "/") // "^BenchmarkRDMAAtomic$/^op=fetch_add$"
			bench = strings.TrimSuffix(strings.TrimPrefix(first, "^Benchmark"), "$")
		}
	}
	size, _ := strconv.Atoi(os.Getenv("RDMABENCH_SIZES"))
	tag := bench
	if tr := os.Getenv("RDMABENCH_TRANSPORT"); tr != "" {
		tag += " " + tr
	}
	fakeLog("ours %s %d", tag, size)
	if peer := os.Getenv("RDMABENCH_PEER"); peer != "" {
		fakeLog("ours with RDMABENCH_PEER=%s", peer)
	}
	fakeCPULog("ours with RDMABENCH_CPUS=%s RDMABENCH_WARMUP=%s", os.Getenv("RDMABENCH_CPUS"), os.Getenv("RDMABENCH_WARMUP"))
	// Ours: 4% slower at p50 and 20% at p99 than the fake perftest, in ns.
	typ := (10 + float64(size)/1000) * 1000
	fmt.Printf("rdma-device: %s\nrdma-gid-index: %s\nrdma-mtu: 1024\nrdmabench-warmup: 1000\ngoos: linux\n",
		os.Getenv("RDMABENCH_DEVICE"), os.Getenv("RDMABENCH_GID_INDEX"))
	names := []string{fmt.Sprintf("%s/size=%d", bench, size)}
	if bench == "RDMAAtomic" {
		// Another operation first: the parser must pick fetch_add.
		names = []string{"RDMAAtomic/op=cmp_swap/size=8", "RDMAAtomic/op=fetch_add/size=8"}
	}
	for i, n := range names {
		f := 1.0 + float64(i)*0 // every listed result has the same figures
		if len(names) > 1 && i == 0 {
			f = 5 // a wrong pick would show as a 5x ratio
		}
		fmt.Printf("Benchmark%s-4\t%d\t%.0f ns/op\t%.0f max-ns\t%.0f min-ns\t%.0f p50-ns\t%.0f p99-ns\t%.0f stddev-ns\t0 B/op\t0 allocs/op\n",
			n, iters, f*(typ+1000), f*typ*60, f*(typ-1000), f*typ*1.04, f*typ*3*1.2, 0.0)
	}
	// The raw samples, as the benchmark writes them: one-way ns for the
	// halved operations, ours 4% slower in the body and 20% in the tail.
	if dir := os.Getenv("RDMABENCH_SAMPLES_DIR"); dir != "" {
		f, err := os.CreateTemp(dir, "Benchmark"+strings.ReplaceAll(names[len(names)-1], "/", "_")+".*.txt")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for i := 1; i <= iters; i++ {
			fmt.Fprintf(f, "%.1f\n", fakeSample(i, typ, 1.04, 1.2))
		}
		f.Close()
	}
	fmt.Print("PASS\n")
	return 0
}

// fakeConfig links the fakes into a fresh directory, puts it first on
// PATH and returns a configuration that uses them.
func fakeConfig(t *testing.T) *Config {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ib_write_lat", "ib_read_lat", "ib_send_lat", "ib_atomic_lat", "fake.test", "rdmapeer"} {
		if err := os.Symlink(self, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_LOG", filepath.Join(dir, "log"))
	t.Setenv("FAKE_CPULOG", filepath.Join(dir, "cpulog"))
	cpus, err := env.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	last := cpus[len(cpus)-1] // one CPU for both: the test runs on any machine
	// What rdmacompare -rounds 2 -iters 200 -timeout 20s -port 28515
	// -device rxe7 -gid-index 3 -cpus LAST,LAST -out DIR/out configures.
	return &Config{Bench: filepath.Join(dir, "fake.test"), Sizes: []int{2, 4096}, Iters: 200, Rounds: 2,
		Device: "rxe7", GIDIndex: 3, Timeout: 20 * time.Second, ServerAddr: "127.0.0.1", Port: 28515,
		OutDir: filepath.Join(dir, "out"), Retries: 2, Tools: tools[:1], CPUs: [2]int{last, last}, PinPerftest: true}
}

func TestRunWithFakes(t *testing.T) {
	c := fakeConfig(t)
	var stdout, stderr bytes.Buffer
	if code := Run(t.Context(), c, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d; stderr:\n%s", code, stderr.String())
	}
	log, err := os.ReadFile(os.Getenv("FAKE_LOG"))
	if err != nil {
		t.Fatal(err)
	}
	// Interleaved, perftest first in odd rounds and ours first in even ones.
	want := "perftest ib_write_lat 2\nours RDMAWrite 2\nperftest ib_write_lat 4096\nours RDMAWrite 4096\n" +
		"ours RDMAWrite 2\nperftest ib_write_lat 2\nours RDMAWrite 4096\nperftest ib_write_lat 4096\n"
	if string(log) != want {
		t.Errorf("runs in order:\n%s\nwant\n%s", log, want)
	}
	cpulog, err := os.ReadFile(os.Getenv("FAKE_CPULOG"))
	if err != nil {
		t.Fatal(err)
	}
	cpu := strconv.Itoa(c.CPUs[0])
	for _, l := range strings.Split(strings.TrimSpace(string(cpulog)), "\n") {
		// Both perftest processes pinned where ours runs; ours told so,
		// and told to warm up not at all (-warmup applies to both).
		if l != "perftest server on "+cpu && l != "perftest client on "+cpu &&
			!strings.HasPrefix(l, "ours with RDMABENCH_CPUS="+cpu+","+cpu+" RDMABENCH_WARMUP=0 on ") {
			t.Errorf("cpu log line %q", l)
		}
	}
	out := stdout.String()
	texttest.ContainsAll(t, "output", out,
		"on rxe7 (GID index 3), 200 iterations each, 2 rounds",
		"ours setup:     rdma-device rxe7, rdma-gid-index 3, rdma-mtu 1024, rdmabench-warmup 1000",
		// From the raw samples: perftest's 199 of 10.002 us (one in 20
		// 3x), ours 200 at 1.04x (tail 1.2x): p50 ratio 1.040, p99 1.200
		// (10.01: the histogram's highest value equivalent to 10.002).
		"  p50        10.01  [10.01..10.01]            10.41  [10.41..10.41]          1.040x  [1.040..1.040]     t_typical     10.00",
		"  p99        30.01  [30.01..30.01]            36.01  [36.01..36.01]          1.200x  [1.200..1.200]     99%           30.01",
		// Two rounds are too few for the judge.
		"verdict write size 2: p50 1.040x [0.000, +Inf] (target ±2%, 2 rounds, p=0.5: undecided: 2 rounds, the judge decides from 6); p99 1.200x",
		"verdict write size 4096: p50 1.040x",
	)
	for _, name := range []string{"compare.txt", "round1-size2-perftest-server.txt", "round1-size2-perftest-client.txt",
		"round2-size4096-bench.txt", "round2-size4096-ours-samples"} {
		if _, err := os.Stat(filepath.Join(c.OutDir, name)); err != nil {
			t.Errorf("raw output: %v", err)
		}
	}
	// Each run's samples in the directory of its name, none beside it
	// (an empty one was once left for every run).
	if fs, _ := filepath.Glob(filepath.Join(c.OutDir, "round2-size4096-ours-samples", "*.txt")); len(fs) != 1 {
		t.Errorf("round2-size4096-ours-samples holds %v, want one samples file", fs)
	}
	if extra, _ := filepath.Glob(filepath.Join(c.OutDir, "*-ours-samples-*")); len(extra) != 0 {
		t.Errorf("fresh directories beside the named ones: %v", extra)
	}
}

// TestTimeLimit: with a limit the rounds so far say cannot be kept, the
// run stops between rounds and still judges what it measured.
func TestTimeLimit(t *testing.T) {
	c := fakeConfig(t)
	c.Rounds, c.Sizes, c.TimeLimit = 5, []int{2}, time.Nanosecond
	var stdout, stderr bytes.Buffer
	if code := Run(t.Context(), c, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d; stderr:\n%s", code, stderr.String())
	}
	texttest.ContainsAll(t, "output", stdout.String(), "note: stopped after 1 of 5 rounds: the next would end past -time-limit 1ns", "size 2 B (both sides ran in 1 of 1 rounds)", "verdict write size 2: p50 1.040x")
}

func TestRunServerHangs(t *testing.T) {
	c := fakeConfig(t)
	c.Rounds, c.Sizes, c.Timeout = 1, []int{2}, time.Second
	t.Setenv("FAKE_MODE", "hang-server")
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := Run(t.Context(), c, &stdout, &stderr)
	if code != abtest.ExitFailed {
		t.Errorf("status %d, want %d (a run failed)", code, abtest.ExitFailed)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s with -timeout 1s", d)
	}
	if !strings.Contains(stderr.String(), "timed out after 1s, killed") {
		t.Errorf("stderr lacks the timeout:\n%s", stderr.String())
	}
	// The benchmark still ran; the table says what is missing.
	if !strings.Contains(stdout.String(), "size 2 B (both sides ran in 0 of 1 rounds)") ||
		!strings.Contains(stdout.String(), "p50: no figures") {
		t.Errorf("table:\n%s", stdout.String())
	}
}

func TestRunRetriesNoClock(t *testing.T) {
	c := fakeConfig(t)
	c.Rounds, c.Sizes = 1, []int{2}
	t.Setenv("FAKE_MODE", "noclock-once")
	var stdout, stderr bytes.Buffer
	if code := Run(t.Context(), c, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "could not estimate the CPU frequency (inf/nan figures); running it again") {
		t.Errorf("stderr lacks the retry:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "size 2 B (both sides ran in 1 of 1 rounds)") {
		t.Errorf("table:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(c.OutDir, "round1-size2-perftest-try2-client.txt")); err != nil {
		t.Errorf("second try's raw output: %v", err)
	}
}

// fakePeer listens where -listen says, logs its pid and command line, and
// serves nothing until it is killed, as rdmapeer -idle none would wait.
func fakePeer(args []string) int {
	listen := ""
	for i, a := range args {
		if a == "-listen" && i+1 < len(args) {
			listen = args[i+1]
		}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer ln.Close()
	fakeLog("peer pid %d %s", os.Getpid(), strings.Join(args, " "))
	select {}
}

// With -strict the status is the verdict's (abtest's table): too few
// rounds leave the targets undecided (4); six rounds of ours at 1.04x
// perftest's p50 miss the ±2% target (1).
func TestStrictStatuses(t *testing.T) {
	for _, c := range []struct {
		rounds, want int
	}{{2, abtest.ExitUndecided}, {6, abtest.ExitRegressed}} {
		cfg := fakeConfig(t)
		cfg.Rounds, cfg.Sizes, cfg.Strict = c.rounds, []int{2}, true
		var stdout, stderr bytes.Buffer
		if code := Run(t.Context(), cfg, &stdout, &stderr); code != c.want {
			t.Errorf("%d rounds: status %d, want %d\n%s\n%s", c.rounds, code, c.want, stdout.String(), stderr.String())
		}
	}
}
