package rdmalat

import (
	"errors"
	"fmt"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/verbs"
)

// The choices an endpoint makes of its device: port, GID and MTU.

func pickPort(ctx *verbs.Context, attr verbs.DeviceAttr, want int) (uint8, verbs.PortAttr, error) {
	if want > 0 {
		if want > int(attr.PhysPortCount) { // libibverbs says only "invalid argument"
			return 0, verbs.PortAttr{}, fmt.Errorf("rdmalat: %s has ports 1..%d, not port %d", ctx.Name(), attr.PhysPortCount, want)
		}
		pa, err := ctx.QueryPort(uint8(want))
		if err != nil {
			return 0, pa, err
		}
		if pa.State != verbs.PortActive {
			return 0, pa, fmt.Errorf("rdmalat: %s port %d is %v, not ACTIVE (check the link; ibv_devinfo shows it)", ctx.Name(), want, pa.State)
		}
		return uint8(want), pa, nil
	}
	var states []string
	for p := 1; p <= int(attr.PhysPortCount); p++ {
		pa, err := ctx.QueryPort(uint8(p))
		if err != nil {
			return 0, pa, err
		}
		if pa.State == verbs.PortActive {
			return uint8(p), pa, nil
		}
		states = append(states, fmt.Sprintf("port %d %v", p, pa.State))
	}
	return 0, verbs.PortAttr{}, fmt.Errorf("rdmalat: %s has no ACTIVE port (%v): bring a link up or choose another device", ctx.Name(), states)
}

func pickGID(ctx *verbs.Context, port uint8, pa verbs.PortAttr, index int) (verbs.GID, error) {
	if index >= 0 {
		g, err := ctx.GID(port, index)
		if err != nil {
			return g, fmt.Errorf("rdmalat: %s port %d GID index %d (RDMABENCH_GID_INDEX): %w", ctx.Name(), port, index, err)
		}
		if g.IsZero() && pa.LinkLayer == verbs.LinkLayerEthernet {
			return g, fmt.Errorf("rdmalat: %s port %d GID index %d (RDMABENCH_GID_INDEX) is empty: pick a filled entry (ibv_devinfo -v lists them)", ctx.Name(), port, index)
		}
		return g, nil
	}
	gids, err := ctx.GIDs(port, 0) // the whole table, in one call
	if err != nil {
		return verbs.GID{}, err
	}
	if pa.LinkLayer != verbs.LinkLayerEthernet && len(gids) > 0 {
		return gids[0], nil // InfiniBand routes by LID; GID 0 serves a GRH when one is used
	}
	g, err := verbs.BestGID(gids)
	if err != nil {
		return g, fmt.Errorf("rdmalat: %s port %d: %w (on RoCE, the netdev needs an IP address)", ctx.Name(), port, err)
	}
	return g, nil
}

func pickMTU(pa verbs.PortAttr, want int) (verbs.MTU, error) {
	if want == 0 {
		return pa.ActiveMTU, nil
	}
	m, err := verbs.ParseMTU(want)
	if err != nil {
		return 0, err
	}
	if m > pa.ActiveMTU {
		return 0, fmt.Errorf("MTU %d (RDMABENCH_MTU) is above the port's active MTU %v", want, pa.ActiveMTU)
	}
	return m, nil
}

// ErrGIDFamily is the cause when the two sides' GIDs carry addresses of
// different IP families on RoCE: the packets of one would never reach the
// other, and the run would end, much later, in "transport retry counter
// exceeded". perftest refuses such a pair too.
var ErrGIDFamily = errors.New("GIDs of different IP versions")

// checkGIDFamily fails, matching ErrGIDFamily, when a RoCE endpoint's GID
// and the peer's are not of one IP version. InfiniBand (no GRH: routed
// by LID) and a peer that sent no GID are not checked.
func checkGIDFamily(dev string, local verbs.GID, remote [16]byte, grh bool) error {
	r := verbs.GID{Raw: remote}
	if !grh || r.IsZero() || local.IsZero() || local.IsIPv4() == r.IsIPv4() {
		return nil
	}
	return fmt.Errorf("rdmalat: %w: GID %d of %s is %s (%v) but the peer's is %s (%v): set %s on one side to a GID of the other's version (rdmainfo lists the GIDs)",
		ErrGIDFamily, local.Index, dev, local.Family(), local, r.Family(), r, env.VarGIDIndex)
}
