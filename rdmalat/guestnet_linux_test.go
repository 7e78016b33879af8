package rdmalat_test

import (
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/testenv"
	"github.com/rdmabench/rdmabench/verbs"
)

// The guest's iproute2 (busybox's ip applet has no nodad) and rdma tool.
const (
	guestIP   = "/usr/bin/ip"
	guestRDMA = "/usr/bin/rdma"
)

// guestNet adds network and rxe devices inside the soft-RoCE VM for one
// test; what it adds is removed when the test ends, and rxe0 and rxe1 are
// not touched.
type guestNet struct{ t *testing.T }

// inGuest returns a guestNet, or skips the test outside the VM with why
// (what it would add to the host).
func inGuest(t *testing.T, why string) guestNet {
	t.Helper()
	if c := testenv.MustHaveRDMA(t); !c.InVM {
		t.Skip("skipping: " + why + "; runs in the soft-RoCE VM only (make test-vm)")
	}
	return guestNet{t}
}

// run runs a command and fails the test with its output.
func (g guestNet) run(name string, args ...string) {
	g.t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(g.t, err, "%s %s: %s", name, strings.Join(args, " "), out)
}

// cleanup runs a command when the test ends, reporting its failure.
func (g guestNet) cleanup(name string, args ...string) {
	g.t.Cleanup(func() {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			g.t.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
		}
	})
}

// veth adds the pair a-b; deleting a at the end removes both ends and
// whatever sits on them (VLANs, addresses, GIDs).
func (g guestNet) veth(a, b string) {
	g.t.Helper()
	g.run(guestIP, "link", "add", a, "type", "veth", "peer", "name", b)
	g.cleanup(guestIP, "link", "del", a)
}

// noDAD turns off duplicate address detection, so that IPv6 addresses
// and their GIDs appear at once instead of after 1-3 s.
func (g guestNet) noDAD(ifaces ...string) {
	g.t.Helper()
	for _, i := range ifaces {
		g.run("/bin/sh", "-c", "echo 0 >/proc/sys/net/ipv6/conf/"+i+"/accept_dad")
	}
}

// up sets the interfaces up.
func (g guestNet) up(ifaces ...string) {
	g.t.Helper()
	for _, i := range ifaces {
		g.run(guestIP, "link", "set", i, "up")
	}
}

// rxe adds the rxe device dev on netdev.
func (g guestNet) rxe(dev, netdev string) {
	g.t.Helper()
	g.run(guestRDMA, "link", "add", dev, "type", "rxe", "netdev", netdev)
	g.cleanup(guestRDMA, "link", "delete", dev)
}

// waitGIDs reads dev's port-1 GID table until done accepts it with the
// port ACTIVE, for at most 10 s, and returns the last table read.
func (g guestNet) waitGIDs(dev string, done func([]verbs.GID) bool) []verbs.GID {
	g.t.Helper()
	ctx, err := verbs.Open(dev)
	require.NoError(g.t, err)
	defer func() { require.NoError(g.t, ctx.Close()) }()
	var gids []verbs.GID
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		pa, err := ctx.QueryPort(1)
		require.NoError(g.t, err)
		gids, err = ctx.GIDs(1, 0)
		require.NoError(g.t, err)
		if done(gids) && pa.State == verbs.PortActive {
			break
		}
	}
	return gids
}

// roceV2GID returns the RoCE v2 GID of ip in gids, or a zero GID.
func roceV2GID(gids []verbs.GID, ip string) verbs.GID {
	want := net.ParseIP(ip)
	for _, g := range gids {
		if g.Type == verbs.GIDTypeRoCEv2 && net.IP(g.Raw[:]).Equal(want) {
			return g
		}
	}
	return verbs.GID{}
}
