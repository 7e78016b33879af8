package kernel

import (
	"slices"
	"strings"
	"testing"
)

func TestLoadOrder(t *testing.T) {
	const dep = `kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko: kernel/drivers/infiniband/core/ib_uverbs.ko kernel/drivers/infiniband/core/ib_core.ko kernel/net/ipv4/udp_tunnel.ko kernel/net/ipv6/ip6_udp_tunnel.ko
kernel/drivers/infiniband/core/ib_uverbs.ko: kernel/drivers/infiniband/core/ib_core.ko
kernel/drivers/infiniband/core/ib_core.ko:
kernel/net/ipv4/udp_tunnel.ko:
kernel/net/ipv6/ip6_udp_tunnel.ko:
kernel/crypto/crc32_generic.ko:
kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko kernel/fs/fscache/fscache.ko kernel/fs/netfs/netfs.ko
kernel/fs/fscache/fscache.ko: kernel/fs/netfs/netfs.ko
kernel/fs/netfs/netfs.ko:
kernel/net/9p/9pnet.ko:
kernel/drivers/some/dash-name.ko:
`
	const builtin = "kernel/lib/crc32.ko\nkernel/fs/configfs/configfs.ko\n"
	ix, err := ParseModulesDep(strings.NewReader(dep), strings.NewReader(builtin))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ix.LoadOrder([]string{"crc32_generic", "rdma_rxe", "configfs", "9p", "dash_name"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"kernel/crypto/crc32_generic.ko",
		"kernel/drivers/infiniband/core/ib_core.ko", // via ib_uverbs, first dependency listed
		"kernel/drivers/infiniband/core/ib_uverbs.ko",
		"kernel/net/ipv4/udp_tunnel.ko",
		"kernel/net/ipv6/ip6_udp_tunnel.ko",
		"kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko",
		// configfs is built in: skipped
		"kernel/net/9p/9pnet.ko",
		"kernel/fs/netfs/netfs.ko",
		"kernel/fs/fscache/fscache.ko",
		"kernel/fs/9p/9p.ko",
		"kernel/drivers/some/dash-name.ko",
	}
	if !slices.Equal(got, want) {
		t.Errorf("loadOrder:\n got %q\nwant %q", got, want)
	}
	if _, err := ix.LoadOrder([]string{"siw"}); err == nil || !strings.Contains(err.Error(), "siw") {
		t.Errorf("loadOrder(siw) = %v, want an error naming siw", err)
	}
}

func TestLoadOrderCycle(t *testing.T) {
	ix, _ := ParseModulesDep(strings.NewReader("a.ko: b.ko\nb.ko: a.ko\n"), nil)
	if _, err := ix.LoadOrder([]string{"a"}); err == nil {
		t.Error("a dependency cycle was accepted")
	}
}
