package env

import "github.com/rdmabench/rdmabench/internal/spec"

// parseQoS reads RDMABENCH_TCLASS, _FLOW_LABEL, _SL and _PKEY_INDEX.
func parseQoS(getenv func(string) string) (spec.QoS, error) {
	var q spec.QoS
	tc, err := parseInt(getenv, VarTClass, 0, 0, 255, "a traffic class 0..255, the IP TOS byte on RoCE v2: DSCP times 4 plus ECN, e.g. "+VarTClass+"=96 for DSCP 24")
	if err != nil {
		return q, err
	}
	fl, err := parseInt(getenv, VarFlowLabel, 0, 0, spec.MaxFlowLabel, "a flow label 0..1048575 (20 bits), e.g. "+VarFlowLabel+"=1")
	if err != nil {
		return q, err
	}
	sl, err := parseInt(getenv, VarSL, 0, 0, spec.MaxSL, "a service level 0..15, e.g. "+VarSL+"=3")
	if err != nil {
		return q, err
	}
	pk, err := parseInt(getenv, VarPKeyIndex, 0, 0, 65535, "a P_Key table index such as 0 (see: ibv_devinfo -v, or /sys/class/infiniband/DEV/ports/N/pkeys)")
	if err != nil {
		return q, err
	}
	return spec.QoS{TrafficClass: uint8(tc), FlowLabel: uint32(fl), SL: uint8(sl), PKeyIndex: uint16(pk)}, nil
}
