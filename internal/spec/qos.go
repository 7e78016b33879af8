package spec

import (
	"fmt"
	"strconv"
)

// QoS is where on the fabric a queue pair's packets travel: the fields
// perftest sets with --tclass, --flow_label, --sl and --pkey_index. The
// zero value is every default (class 0, no flow label, SL 0, the first
// P_Key), which is what a run without these settings has always used.
//
// TrafficClass and FlowLabel are GRH fields, so they reach the wire only
// where a GRH is sent (RoCE always, InfiniBand only with a GID index):
// on RoCE v2 the traffic class is the IP header's TOS byte (DSCP in its
// upper six bits, ECN in the lower two) and the flow label is IPv6's.
// SL is the service level (InfiniBand's virtual lane mapping; on RoCE the
// driver may map it to a VLAN priority). PKeyIndex is an index into the
// port's P_Key table, set when the queue pair moves to INIT.
type QoS struct {
	TrafficClass uint8
	FlowLabel    uint32 // 20 bits
	SL           uint8  // 0..15
	PKeyIndex    uint16
}

// Limits of the QoS fields.
const (
	MaxFlowLabel = 1<<20 - 1
	MaxSL        = 15
)

// Validate reports a field outside what the wire can carry.
func (q QoS) Validate() error {
	if q.FlowLabel > MaxFlowLabel {
		return fmt.Errorf("flow label %d: must be 0..%d (20 bits)", q.FlowLabel, MaxFlowLabel)
	}
	if q.SL > MaxSL {
		return fmt.Errorf("service level %d: must be 0..%d", q.SL, MaxSL)
	}
	return nil
}

// ConfigLines returns the configuration lines' keys and values for the
// fields that are set. A field at its default prints nothing, so that the
// results of a run without these settings carry the same lines as before
// they existed and still compare with older result files.
func (q QoS) ConfigLines() [][2]string {
	var out [][2]string
	if q.TrafficClass != 0 {
		out = append(out, [2]string{"rdma-tclass", strconv.Itoa(int(q.TrafficClass))})
	}
	if q.FlowLabel != 0 {
		out = append(out, [2]string{"rdma-flow-label", strconv.Itoa(int(q.FlowLabel))})
	}
	if q.SL != 0 {
		out = append(out, [2]string{"rdma-sl", strconv.Itoa(int(q.SL))})
	}
	if q.PKeyIndex != 0 {
		out = append(out, [2]string{"rdma-pkey-index", strconv.Itoa(int(q.PKeyIndex))})
	}
	return out
}
