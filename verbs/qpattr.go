package verbs

import "runtime"

// QPAttr is what ibv_query_qp reports of a queue pair's state and path:
// the fields a run sets and a test checks (the P_Key index from INIT, the
// address vector from RTR).
type QPAttr struct {
	State     QPState
	Port      uint8
	PKeyIndex uint16
	MTU       MTU // path MTU (connected QPs)
	DestQPN   uint32
	// The address vector of a connected QP (its remote end).
	DLID         uint16
	SL           uint8
	IsGlobal     bool // a GRH is sent
	DGID         [16]byte
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
	FlowLabel    uint32
}

// Query returns the queue pair's attributes. Equivalent to ibv_query_qp
// with the state, P_Key index, port, path MTU, destination QP number and
// address vector asked for.
func (qp *QP) Query() (QPAttr, error) {
	p := qp.live()
	if p == nil {
		return QPAttr{}, errClosed("ibv_query_qp")
	}
	a, err := ibvQueryQP(p)
	runtime.KeepAlive(qp)
	return a, err
}
