package rdmacm

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPeerInfoRoundTrip(t *testing.T) {
	p := PeerInfo{Addr: 0x7f00_1234_5678, Size: 8 << 20, RKey: 0xdeadbeef, QPN: 0x11, QKey: udpQKey}
	copy(p.GID[:], []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 77, 1})
	b := p.marshal()
	require.Len(t, b, peerInfoLen)
	assert.LessOrEqual(t, len(b), 56, "must fit an RC connect request's private data")
	got, err := unmarshalPeerInfo(append(b, make([]byte, 8)...)) // the CM pads with zeros
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assert.Equal(t, "192.168.77.1", gidAddr(got.GID).String())
}

func TestPeerInfoBad(t *testing.T) {
	_, err := unmarshalPeerInfo(nil)
	assert.ErrorContains(t, err, "0 bytes")
	b := PeerInfo{}.marshal()
	b[3] = 9
	_, err = unmarshalPeerInfo(b)
	assert.ErrorContains(t, err, "version 9")
	copy(b, "ABCD")
	_, err = unmarshalPeerInfo(b)
	assert.ErrorContains(t, err, "not from rdmabench")
}

func TestRejectReason(t *testing.T) {
	assert.Equal(t, "device mismatch", rejectReason(append(rejectData("device mismatch"), 0, 0)))
	assert.Equal(t, "", rejectReason([]byte("something else")))
	assert.Len(t, rejectData(string(make([]byte, 500))), maxRejectLen)
}

func TestErrorIs(t *testing.T) {
	deadline := &Error{Op: "waiting", Err: os.ErrDeadlineExceeded}
	assert.ErrorIs(t, deadline, os.ErrDeadlineExceeded)
	assert.ErrorIs(t, deadline, context.DeadlineExceeded)
	assert.ErrorIs(t, &Error{Op: "x", Err: syscall.EADDRNOTAVAIL}, os.ErrNotExist)
	assert.ErrorIs(t, &Error{Op: "x", Err: syscall.ECONNREFUSED}, syscall.ECONNREFUSED)
	assert.ErrorIs(t, &Error{Op: "x", Err: syscall.EOPNOTSUPP}, errors.ErrUnsupported)
	assert.NotErrorIs(t, &Error{Op: "x", Err: syscall.EIO}, os.ErrNotExist)
	assert.Equal(t, "verbs: rdma_connect: connection refused (nobody listens)",
		(&Error{Op: "rdma_connect", Err: syscall.ECONNREFUSED, Detail: "nobody listens"}).Error())
}

func TestEventErr(t *testing.T) {
	err := eventErr("rdma_connect 1.2.3.4:5", event{typ: evRejected, status: 28, private: rejectData("busy")})
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.ErrorContains(t, err, "refused by the peer: busy")
	err = eventErr("rdma_resolve_addr", event{typ: evAddrError, status: -int(syscall.ETIMEDOUT)})
	assert.ErrorIs(t, err, syscall.ETIMEDOUT)
	err = eventErr("rdma_connect", event{typ: evUnreachable, status: -int(syscall.ETIMEDOUT)})
	assert.ErrorIs(t, err, syscall.ETIMEDOUT)
}

// TestConstants checks the Go mirrors of librdmacm's enums against C.
func TestConstants(t *testing.T) {
	c := cConstants()
	if !haveCgo {
		t.Skip("skipping: built without cgo, no C constants to compare")
	}
	want := map[string]int64{
		"RDMA_PS_TCP": int64(psTCP), "RDMA_PS_UDP": int64(psUDP), "RDMA_UDP_QKEY": udpQKey,
		"RDMA_CM_EVENT_ADDR_RESOLVED": int64(evAddrResolved), "RDMA_CM_EVENT_ADDR_ERROR": int64(evAddrError),
		"RDMA_CM_EVENT_ROUTE_RESOLVED": int64(evRouteResolved), "RDMA_CM_EVENT_ROUTE_ERROR": int64(evRouteError),
		"RDMA_CM_EVENT_CONNECT_REQUEST": int64(evConnectRequest), "RDMA_CM_EVENT_CONNECT_RESPONSE": int64(evConnectResponse),
		"RDMA_CM_EVENT_CONNECT_ERROR": int64(evConnectError), "RDMA_CM_EVENT_UNREACHABLE": int64(evUnreachable),
		"RDMA_CM_EVENT_REJECTED": int64(evRejected), "RDMA_CM_EVENT_ESTABLISHED": int64(evEstablished),
		"RDMA_CM_EVENT_DISCONNECTED": int64(evDisconnected), "RDMA_CM_EVENT_DEVICE_REMOVAL": int64(evDeviceRemoval),
		"RDMA_CM_EVENT_TIMEWAIT_EXIT": int64(evTimewaitExit),
	}
	assert.Equal(t, want, c)
	assert.Equal(t, "RDMA_CM_EVENT_ESTABLISHED", evEstablished.String())
}
