package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestQoSConfigLines(t *testing.T) {
	assert.Empty(t, QoS{}.ConfigLines(), "defaults print nothing: old result files keep comparing")
	assert.Equal(t, [][2]string{{"rdma-tclass", "96"}, {"rdma-sl", "3"}},
		QoS{TrafficClass: 96, SL: 3}.ConfigLines())
	assert.Equal(t, [][2]string{{"rdma-tclass", "1"}, {"rdma-flow-label", "2"}, {"rdma-sl", "3"}, {"rdma-pkey-index", "4"}},
		QoS{TrafficClass: 1, FlowLabel: 2, SL: 3, PKeyIndex: 4}.ConfigLines())
	assert.Error(t, QoS{FlowLabel: 1 << 20}.Validate())
	assert.Error(t, QoS{SL: 16}.Validate())
}
