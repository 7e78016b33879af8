//go:build linux

package rocecap

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParse(t *testing.T) {
	eth := func(typ uint16) []byte {
		b := make([]byte, 14)
		binary.BigEndian.PutUint16(b[12:], typ)
		return b
	}
	v4 := append(eth(unix.ETH_P_IP), 0x45, 0x68, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0xc0, 0, 0x12, 0xb7)
	p, ok := Parse(v4)
	require.True(t, ok)
	assert.Equal(t, Packet{TrafficClass: 0x68}, p)
	v4[len(v4)-1] = 0xb8 // port 4792
	_, ok = Parse(v4)
	assert.False(t, ok)

	// version 6, traffic class 0x68, flow label 0x4d2c1: 0110 0110 1000 0100 1101 0010 1100 0001
	v6 := append(eth(unix.ETH_P_IPV6), 0x66, 0x84, 0xd2, 0xc1, 0, 8, 17, 64)
	v6 = append(v6, make([]byte, 32)...)
	v6 = append(v6, 0xc0, 0, 0x12, 0xb7)
	p, ok = Parse(v6)
	require.True(t, ok)
	assert.Equal(t, Packet{IPv6: true, TrafficClass: 0x68, FlowLabel: 0x4d2c1}, p)
	_, ok = Parse(v6[:40])
	assert.False(t, ok, "truncated")
	_, ok = Parse(eth(unix.ETH_P_ARP))
	assert.False(t, ok)
}
