package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/rdmalattest"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// TestTwoNodeLoad: with a load stream (RDMABENCH_LOAD) in two-node mode,
// rdmapeer holds the stream's target in a load session of its own, beside
// the latency session on its only answering CPU; Measure reports the
// stream's throughput beside the latency in every run; the peer logs the
// stream's session with the runs it was renewed for and the bytes it
// took, and once both sessions end it holds no verbs object and no
// registered memory.
func TestTwoNodeLoad(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev)
	p := dialPeer(t, pp.addr, dev, 64, 10*time.Second)
	// 4 KiB writes: under TCG the stream moves a few MB/s, so a run of
	// 200 round trips sees many of them complete.
	const size, n, runs = 4 << 10, 200, 2
	require.NoError(t, p.StartLoad(size))
	assert.Equal(t, size, p.Load())
	cfg := strings.Join(testenv.ConfigLines(p, testenv.MustLoad(t)), "\n")
	assert.Contains(t, cfg, "rdmabench-mode: two-node\n")
	assert.Contains(t, cfg, "rdmabench-load: 4096")

	var p50, mbps []float64
	for range runs {
		m := measure(t, p, n)
		p50 = append(p50, m["p50-ns"])
		mbps = append(mbps, m["load-MB/s"])
	}
	t.Logf("two-node under load: p50 one-way (ns) %v; load %v MB/s", p50, mbps)
	for i := range runs {
		assert.Positive(t, p50[i], "the latency is reported")
		assert.Positive(t, mbps[i], "the load stream's throughput is reported")
	}

	require.NoError(t, p.StopLoad())
	line := pp.log.wait(t, 10*time.Second, " load-stream ", "result=")
	assert.Contains(t, line, fmt.Sprintf("device=%s load-stream op=write max-size=4096 runs=%d bytes=", peerDev, runs))
	assert.Contains(t, line, "result=ok")
	written := regexp.MustCompile(` bytes=(\d+) `).FindStringSubmatch(line)
	require.NotNil(t, written, line)
	b, err := strconv.ParseUint(written[1], 10, 64)
	require.NoError(t, err)
	assert.Positive(t, b, "the peer took the stream's writes")
	assert.Zero(t, b%size, "whole writes")

	// The latency session goes on without the stream, and reports none.
	m := measure(t, p, n)
	assert.NotContains(t, m, "load-MB/s")
	assert.NotContains(t, strings.Join(testenv.ConfigLines(p, testenv.MustLoad(t)), "\n"), "rdmabench-load")
	require.NoError(t, p.Close())
	pp.log.wait(t, 10*time.Second, "op=write max-size=64 ", "result=ok")

	require.NoError(t, pp.cmd.Process.Signal(syscall.SIGTERM))
	stopped := pp.log.wait(t, 10*time.Second, "stopped: ")
	assert.Contains(t, stopped, "stopped: 2 sessions (0 failed)")
	assert.Contains(t, stopped, "open verbs objects none, registered bytes 0")
}

// TestTwoNodeLoadIdle: a load stream that is not renewed (no measured
// run starts) within rdmapeer -idle loses its session: the peer frees the
// target, so streaming alone cannot hold a slot and its memory forever.
// The client's StopLoad then reports that the session has gone.
func TestTwoNodeLoadIdle(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev, "-idle", "2s")
	p := dialPeer(t, pp.addr, dev, 64, 5*time.Second)
	require.NoError(t, p.StartLoad(4<<10))
	line := pp.log.wait(t, 30*time.Second, " load-stream ", "result=")
	assert.Contains(t, line, " runs=0 ")
	assert.Contains(t, line, "result=error: oob: no request (Params or Run) from ")
	assert.Contains(t, line, "within 2s")
	assert.ErrorContains(t, p.StopLoad(), "load stream's session")

	require.NoError(t, pp.cmd.Process.Signal(syscall.SIGTERM))
	stopped := pp.log.wait(t, 10*time.Second, "stopped: ")
	assert.Contains(t, stopped, "open verbs objects none, registered bytes 0")
}

// measure runs Measure on p for n round trips of 64 bytes and returns
// the metrics it reported.
func measure(t *testing.T, p *rdmalat.Pair, n int) map[string]float64 {
	b := rdmalattest.NewMetricsB(t, n)
	rdmalat.Measure(b, p, 64, 10, nil)
	return b.Metrics
}
