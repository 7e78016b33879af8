package rdmalat

import (
	"errors"
	"fmt"

	"github.com/rdmabench/rdmabench/internal/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// allocBuffer registers the endpoint's buffer with access: in huge pages
// with cfg.HugePages, with on-demand paging with cfg.ODP once the device
// says it can (perftest --use_hugepages, --odp), its pages preferred on
// cfg.MemNode (set before registration pins them).
func (e *Endpoint) allocBuffer(access verbs.Access) (*verbs.MR, error) {
	restore, err := e.cfg.MemNode.BindThreadMemory()
	if err != nil {
		return nil, fmt.Errorf("rdmalat: %w", err)
	}
	defer restore()
	if e.cfg.ODP {
		caps, err := e.ctx.ODP()
		if err != nil {
			return nil, fmt.Errorf("rdmalat: RDMABENCH_ODP: %w", err)
		}
		if err := odpRefusal(e.cfg.Device, caps, e.cfg.Op, e.cfg.Transport); err != nil {
			return nil, err
		}
		access |= verbs.AccessOnDemand
	}
	if e.cfg.THP {
		if e.cfg.HugePages {
			return nil, errors.New("rdmalat: HugePages and THP both set: choose one")
		}
		mr, err := e.pd.AllocMRTHP(e.lay.total, access)
		if err != nil {
			return nil, fmt.Errorf("rdmalat: RDMABENCH_HUGEPAGES=thp: %w; or reserve huge pages and use RDMABENCH_HUGEPAGES=1", err)
		}
		return mr, nil
	}
	if e.cfg.HugePages {
		mr, err := e.pd.AllocMRHugePages(e.lay.total, access)
		if err != nil {
			return nil, fmt.Errorf("rdmalat: RDMABENCH_HUGEPAGES: %w", err)
		}
		return mr, nil
	}
	return e.pd.AllocMR(e.lay.total, access)
}

// odpRefusal says why device, whose on-demand paging capabilities are
// caps, cannot run op over t on a buffer registered with ODP, or nil if
// it can. Both sides of a ping-pong send and receive (SEND: Send and
// Recv); the rules are perftest's check_odp_support: UC is refused, UD's
// operations are not checked (devices that take UD receives with ODP
// report none).
func odpRefusal(device string, caps verbs.ODPCaps, op spec.Op, t spec.Transport) error {
	if !caps.Supported {
		return fmt.Errorf("rdmalat: RDMABENCH_ODP=1: %s does not support on-demand paging (ibv_query_device_ex: no IBV_ODP_SUPPORT in odp_caps; ibv_devinfo -v shows its ODP capabilities); unset RDMABENCH_ODP", device)
	}
	var have verbs.ODPOps
	switch t {
	case spec.UC:
		return fmt.Errorf("rdmalat: RDMABENCH_ODP=1 over uc: on-demand paging is not available on UC (perftest --odp refuses it too); use RDMABENCH_TRANSPORT=rc or unset RDMABENCH_ODP")
	case spec.UD:
		return nil
	default:
		have = caps.RC
	}
	var need verbs.ODPOps
	switch op {
	case spec.Send, spec.SendImm:
		need = verbs.ODPSend | verbs.ODPRecv
	case spec.Write, spec.WriteImm:
		need = verbs.ODPWrite
	case spec.Read:
		need = verbs.ODPRead
	case spec.FetchAdd, spec.CompareSwap:
		need = verbs.ODPAtomic
	}
	if have&need != need {
		return fmt.Errorf("rdmalat: RDMABENCH_ODP=1: %s supports on-demand paging over %v for %v only, and %v needs %v; unset RDMABENCH_ODP", device, t, have, op, need)
	}
	return nil
}

// HugePages reports whether the endpoint's buffer is backed by reserved
// huge pages (a THP buffer is not: see EndpointConfig.THP), and ODP whether it is registered with on-demand paging.
func (e *Endpoint) HugePages() bool { return e.cfg.HugePages }

// ODP: see HugePages.
func (e *Endpoint) ODP() bool { return e.cfg.ODP }
