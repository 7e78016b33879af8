//go:build linux

package agent

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rdmabench/rdmabench/internal/fleet/control"
	"github.com/rdmabench/rdmabench/internal/fleet/fakenode"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
	"github.com/rdmabench/rdmabench/internal/syncio"
)

// testOptions are rdmafleet's defaults with the fake binaries in bin.
func testOptions(bin string) Options {
	return Options{Bench: filepath.Join(bin, "rdmabench.test"), Peer: filepath.Join(bin, "rdmapeer"),
		Benchmark: "^BenchmarkRDMAWrite$", Benchtime: "1000x", Count: 6, PortBase: 18600, Timeout: 2 * time.Minute}
}

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestStrayCannotEndPair: while dst's agent waits for its partner, a
// stranger on its control port that speaks the old protocol (reads
// "ready", answers "done"), one that sends 400 MiB without a newline,
// and one that is silent, are all refused; the real src then measures
// the pair, and dst ends with it, not before. (Once, the stranger's
// "done" ended dst with exit 0 and the real src recorded "no agent on n2
// answered".)
func TestStrayCannotEndPair(t *testing.T) {
	bin := fakenode.Bin(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, jobdir.PlanFile), []byte("# pattern: file\n# nodes: n1 n2\n1 n1 n2\n"), 0o644))
	base := fakenode.FreePortBase(t, 2)
	hosts := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("127.0.0.1 n1\n127.0.0.1 n2\n"), 0o644))
	opts := testOptions(bin)
	opts.PortBase, opts.Timeout, opts.Hosts = base, 20*time.Second, hosts
	// run runs node's agent of round 1 to its end.
	run := func(node string, log io.Writer) error {
		m := map[string]string{"SLURMD_NODENAME": node, control.EnvToken: testToken, "SLURM_JOB_ID": "77"}
		environ := os.Environ()
		for k, v := range m {
			environ = append(environ, k+"="+v)
		}
		a, err := New(Config{Dir: dir, Round: 1, Options: opts, Getenv: func(k string) string { return m[k] }, Environ: environ, Log: log})
		if err != nil {
			return err
		}
		return a.Run(context.Background())
	}
	var dstLog syncio.Buffer // read while dst writes it
	var srcLog bytes.Buffer
	dstDone := make(chan error, 1)
	go func() { dstDone <- run("n2", &dstLog) }()
	ctlAddr := "127.0.0.1:" + strconv.Itoa(base+1)

	var strays sync.WaitGroup
	dialStray := func() net.Conn {
		for deadline := time.Now().Add(10 * time.Second); ; {
			c, err := net.Dial("tcp", ctlAddr)
			if err == nil {
				return c
			}
			require.True(t, time.Now().Before(deadline), "dst never listened: %v", err)
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The old attack: read a line, answer done.
	old := dialStray()
	line, err := bufio.NewReader(old).ReadString('\n')
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(line, "rdmafleet-agent 1 hello "), line)
	fmt.Fprintln(old, "done")
	_, err = io.ReadAll(old)
	assert.NoError(t, err, "dst closes the stranger's connection")
	old.Close()
	// A flood without a newline, and a silent one.
	flood := dialStray()
	strays.Go(func() {
		defer flood.Close()
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for sent := 0; sent < 400<<20; sent += len(chunk) {
			if _, err := flood.Write(chunk); err != nil {
				return // dst closed it
			}
		}
	})
	silent := dialStray()
	defer silent.Close()

	select {
	case err := <-dstDone:
		t.Fatalf("dst ended (%v) before its partner came; its log:\n%s", err, dstLog.String())
	case <-time.After(300 * time.Millisecond):
	}
	assert.NoError(t, run("n1", &srcLog))
	assert.NoError(t, <-dstDone)
	strays.Wait()
	t.Logf("src:\n%s\ndst:\n%s", srcLog.String(), dstLog.String())
	assert.FileExists(t, filepath.Join(dir, jobdir.PairsDir, "round01-n1-n2.txt"), "the pair was measured")
	assert.NoFileExists(t, filepath.Join(dir, jobdir.PairsDir, "round01-n1-n2.failed"))
	d := dstLog.String()
	assert.Contains(t, d, `refused a control connection from 127.0.0.1:`)
	assert.Contains(t, d, `not an rdmafleet agent's control line: "done"`)
	assert.Contains(t, d, "a control line over 4096 bytes")
}

// TestMain: run through a link named rdmapeer or rdmabench.test
// (fakenode.Bin), the test binary plays that program.
func TestMain(m *testing.M) {
	fakenode.Run(nil)
	goleak.VerifyTestMain(m)
}
