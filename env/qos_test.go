package env

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/envtest"
	"github.com/rdmabench/rdmabench/internal/spec"
)

func TestLoadQoS(t *testing.T) {
	c, err := LoadFrom(envtest.Getenv(VarTClass, "96", VarFlowLabel, "1048575", VarSL, "15", VarPKeyIndex, "3"))
	require.NoError(t, err)
	assert.Equal(t, spec.QoS{TrafficClass: 96, FlowLabel: 1<<20 - 1, SL: 15, PKeyIndex: 3}, c.QoS)
	require.NoError(t, c.QoS.Validate())

	c, err = LoadFrom(envtest.Getenv())
	require.NoError(t, err)
	assert.Equal(t, spec.QoS{}, c.QoS, "unset: every default")

	// rdma_cm: the traffic class applies (rdma_set_option), the rest is
	// the route's and refused.
	c, err = LoadFrom(envtest.Getenv(VarCM, "1", VarTClass, "104"))
	require.NoError(t, err)
	assert.Equal(t, uint8(104), c.QoS.TrafficClass)
	for _, v := range []string{VarFlowLabel, VarSL, VarPKeyIndex} {
		_, err = LoadFrom(envtest.Getenv(VarCM, "1", v, "1"))
		require.Error(t, err, v)
		assert.Contains(t, err.Error(), "with rdma_cm only RDMABENCH_TCLASS applies", v)
	}
}

func TestLoadQoSErrors(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{VarTClass, "256", `RDMABENCH_TCLASS="256": want a traffic class 0..255, the IP TOS byte on RoCE v2: DSCP times 4 plus ECN, e.g. RDMABENCH_TCLASS=96 for DSCP 24`},
		{VarTClass, "cs3", `RDMABENCH_TCLASS="cs3": want a traffic class 0..255`},
		{VarFlowLabel, "1048576", `RDMABENCH_FLOW_LABEL="1048576": want a flow label 0..1048575 (20 bits), e.g. RDMABENCH_FLOW_LABEL=1`},
		{VarFlowLabel, "-1", `RDMABENCH_FLOW_LABEL="-1": want a flow label`},
		{VarSL, "16", `RDMABENCH_SL="16": want a service level 0..15, e.g. RDMABENCH_SL=3`},
		{VarPKeyIndex, "65536", `RDMABENCH_PKEY_INDEX="65536": want a P_Key table index such as 0`},
	} {
		_, err := LoadFrom(envtest.Getenv(tc.name, tc.value))
		require.Error(t, err, tc.name+"="+tc.value)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestLoadCounters(t *testing.T) {
	c, err := LoadFrom(envtest.Getenv(VarCounters, "1"))
	require.NoError(t, err)
	assert.True(t, c.Counters)
	_, err = LoadFrom(envtest.Getenv(VarCounters, "yes"))
	assert.ErrorContains(t, err, "RDMABENCH_COUNTERS")
}

func TestLoadMax(t *testing.T) {
	c, err := LoadFrom(envtest.Getenv(VarMax, "p99=20us,p50=5us"))
	require.NoError(t, err)
	require.Len(t, c.Limits, 2)
	assert.Equal(t, "p99=20µs", c.Limits[0].String())
	_, err = LoadFrom(envtest.Getenv(VarMax, "p99<20us"))
	assert.ErrorContains(t, err, `RDMABENCH_MAX="p99<20us": "p99<20us" is not stat=duration (example: RDMABENCH_MAX=p99=20us,p50=5us`)
}
