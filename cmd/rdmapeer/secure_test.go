package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// remoteConfig is a session of 4 KiB writes from device.
func remoteConfig(device string, timeout time.Duration, token string) rdmalat.RemoteConfig {
	return rdmalat.RemoteConfig{
		Endpoint: rdmalat.EndpointConfig{Device: device, GIDIndex: -1, MaxSize: 4096, Inline: -1},
		Timeout:  timeout, Token: token,
	}
}

// TestTwoNodeToken: rdmapeer with RDMABENCH_PEER_TOKEN serves a client
// with the same token, refuses one without or with another, and never
// logs the token.
func TestTwoNodeToken(t *testing.T) {
	const token = "vm-secret-3f9a"
	dev, peerDev := twoNodeDevices(t)
	pp := startPeerEnv(t, peerDev, []string{env.VarPeerToken + "=" + token})
	_, err := rdmalat.DialPeer(t.Context(), pp.addr, remoteConfig(dev, 2*time.Second, ""))
	require.ErrorIs(t, err, oob.ErrAuth)
	assert.Contains(t, err.Error(), "requires a token: set RDMABENCH_PEER_TOKEN")
	_, err = rdmalat.DialPeer(t.Context(), pp.addr, remoteConfig(dev, 2*time.Second, "guess"))
	require.ErrorIs(t, err, oob.ErrAuth)
	assert.Contains(t, err.Error(), "the client's is wrong")

	p, err := rdmalat.DialPeer(t.Context(), pp.addr, remoteConfig(dev, 5*time.Second, token))
	require.NoError(t, err)
	s, _ := runRoundTrips(t, p, 64, 10, 100)
	assert.Equal(t, int64(100), s.Count)
	require.NoError(t, p.Close())
	pp.log.wait(t, 10*time.Second, "session ", "result=ok")
	assert.Contains(t, pp.log.String(), "clients must prove the token")
	assert.Contains(t, pp.log.String(), "wrong token from client 127.0.0.1:")
	assert.NotContains(t, pp.log.String(), token)
}

// TestTwoNodeAllow: a client outside -allow gets no answer at all.
func TestTwoNodeAllow(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev, "-allow", "127.0.0.2")
	_, err := rdmalat.DialPeer(t.Context(), pp.addr, remoteConfig(dev, 2*time.Second, ""))
	require.ErrorIs(t, err, oob.ErrNotPeer)
	pp.log.wait(t, 5*time.Second, "refused 127.0.0.1:", "not in -allow 127.0.0.2/32")
}

// TestTwoNodeOneSessionPerCPU: with one answering CPU, a second session
// is told the CPU is taken (its latency would be spoiled, and the first
// one's), and is served once the first ends; its config line names the
// CPU.
func TestTwoNodeOneSessionPerCPU(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	cpus, err := rdmalat.DefaultCPUs()
	require.NoError(t, err)
	pp := startPeer(t, peerDev, "-cpu", fmt.Sprint(cpus[1]), "-max-sessions", "4")
	first, err := rdmalat.DialPeer(t.Context(), pp.addr, remoteConfig(dev, 5*time.Second, ""))
	require.NoError(t, err)
	assert.Equal(t, cpus[1], first.PeerCPU)
	_, err = rdmalat.DialPeer(t.Context(), pp.addr, remoteConfig(dev, time.Second, ""))
	require.ErrorIs(t, err, oob.ErrBusy)
	assert.Contains(t, err.Error(), fmt.Sprintf("every answering CPU (rdmapeer -cpu %v) serves another session", cpus[1]))
	require.NoError(t, first.Close())

	second, err := rdmalat.DialPeer(t.Context(), pp.addr, remoteConfig(dev, 10*time.Second, ""))
	require.NoError(t, err)
	defer second.Close()
	assert.Equal(t, cpus[1], second.PeerCPU)
	assert.Zero(t, second.PeerSessions)
	cfg := strings.Join(testenv.ConfigLines(second, testenv.MustLoad(t)), "\n")
	assert.Contains(t, cfg, fmt.Sprintf("rdma-peer-cpu: %v\n", cpus[1]))
	s, _ := runRoundTrips(t, second, 64, 10, 100)
	assert.Equal(t, int64(100), s.Count)
}

// TestTwoNodeRoundTripLimit: a run past rdmapeer's -max-round-trips is
// ended by the peer, which says why and logs it: a client cannot keep
// this node's CPU answering for ever.
func TestTwoNodeRoundTripLimit(t *testing.T) {
	dev, peerDev := twoNodeDevices(t)
	pp := startPeer(t, peerDev, "-max-round-trips", "100")
	p, err := rdmalat.DialPeer(t.Context(), pp.addr, remoteConfig(dev, 5*time.Second, ""))
	require.NoError(t, err)
	defer p.Close()
	r, err := p.Start(64, 0)
	require.NoError(t, err)
	var runErr error
	n := 0
	for ; n < 1000 && runErr == nil; n++ {
		_, runErr = r.Next()
	}
	if closeErr := r.Close(); runErr == nil {
		runErr = closeErr
	}
	require.Error(t, runErr, "%d round trips against a limit of 100", n)
	t.Logf("after %d round trips: %v", n, runErr)
	assert.LessOrEqual(t, n, 102, "the peer stops answering at its limit")
	line := pp.log.wait(t, 10*time.Second, "session ", "result=")
	assert.Contains(t, line, "limit of 100 round trips in one run (rdmapeer -max-round-trips)")
}
