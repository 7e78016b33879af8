package rdmalat

import (
	"errors"
	"fmt"

	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// QoS is a queue pair's traffic class, flow label, service level and
// P_Key index (perftest --tclass, --flow_label, --sl, --pkey_index). The
// zero value is every default. Set in EndpointConfig.QoS, it reaches the
// address vector at RTR (RC, UC), the address handle (UD), the P_Key
// index at INIT, and with rdma_cm the traffic class alone (librdmacm sets
// the rest from its route). In two-node mode the client sends it to the
// peer, which applies it too.
type QoS = spec.QoS

// checkQoS refuses QoS fields out of range, and with rdma_cm the fields
// rdma_cm takes from its route.
func checkQoS(cfg EndpointConfig) error {
	q := cfg.QoS
	if err := q.Validate(); err != nil {
		return fmt.Errorf("rdmalat: %w", err)
	}
	if cfg.CM && (q.FlowLabel != 0 || q.SL != 0 || q.PKeyIndex != 0) {
		return errors.New("rdmalat: rdma_cm takes the flow label, service level and P_Key of its route; with CM set only QoS.TrafficClass applies")
	}
	return nil
}

// checkPKeyIndex refuses a P_Key index past the port's table, with its
// length, before ibv_modify_qp's bare EINVAL.
func checkPKeyIndex(device string, port uint8, pa verbs.PortAttr, index uint16) error {
	if n := pa.PKeyTableLen; n > 0 && int(index) >= n {
		return fmt.Errorf("rdmalat: %s port %d: P_Key index %d is past its table of %d entries (use 0..%d; see /sys/class/infiniband/%s/ports/%d/pkeys)", device, port, index, n, n-1, device, port)
	}
	return nil
}

// QoS returns the endpoint's traffic class, flow label, service level and
// P_Key index.
func (e *Endpoint) QoS() QoS { return e.cfg.QoS }
