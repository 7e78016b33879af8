package env

// NUMA placement, the whole rule beside the CPU rule of cpus.go: on a host
// with several NUMA nodes the busy-polling threads and the registered
// buffers go to the RDMA device's node (perftest 26.x does the same by
// default), unless RDMABENCH_NUMA names another node or turns it off.
// numa_linux.go binds a thread's memory.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Node is a NUMA node, or none. The zero Node is none; OnNode(0) is node 0.
type Node struct {
	id  int
	set bool
}

// OnNode returns node id. A negative id is a programming error.
func OnNode(id int) Node {
	if id < 0 {
		panic(fmt.Sprintf("env.OnNode(%d): node numbers are not negative; the zero Node is none", id))
	}
	return Node{id: id, set: true}
}

// ID returns the node number and true, or false for none.
func (n Node) ID() (id int, ok bool) { return n.id, n.set }

// String returns the node number, or "none".
func (n Node) String() string {
	if !n.set {
		return "none"
	}
	return strconv.Itoa(n.id)
}

// NUMA is the RDMABENCH_NUMA setting. The zero NUMA is the default: the
// device's node.
type NUMA struct {
	Off  bool // "off": no placement (the last two allowed CPUs, memory where the kernel puts it)
	Node Node // a node named; none: the device's
}

// maxNode bounds a node number: the kernel's largest MAX_NUMNODES is 1024.
const maxNode = 1023

// parseNUMA reads RDMABENCH_NUMA: empty or "device", "off", or a node.
func parseNUMA(v string) (NUMA, error) {
	switch v = strings.TrimSpace(v); v {
	case "", "device":
		return NUMA{}, nil
	case "off", "none":
		return NUMA{Off: true}, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxNode {
		return NUMA{}, fmt.Errorf("%s=%q: want a NUMA node number such as 1 (see numactl -H, or ls /sys/devices/system/node), device for the device's node, or off", VarNUMA, v)
	}
	return NUMA{Node: OnNode(n)}, nil
}

// Placement is where the rule puts a run: its node, and the CPUs of that
// node this process may use, from which the default CPUs are taken.
type Placement struct {
	Node Node  // none: no placement (one node, a device of no known node, or off)
	CPUs []int // the node's CPUs this process may use, ascending; may be empty
}

// Place applies the rule for RDMA device dev with setting n, the CPUs this
// process may use being allowed, reading sysfs from sys (rooted at /, as
// os.DirFS("/")): on a host with one node (or none listed) there is no
// placement, whatever n says of node 0; otherwise the named node, or the
// device's. A device of no known node is placed nowhere. A node the host
// does not have is an error that lists those it has.
func Place(sys fs.FS, dev string, n NUMA, allowed []int) (Placement, error) {
	if n.Off {
		return Placement{}, nil
	}
	nodes := OnlineNodes(sys)
	id, named := n.Node.ID()
	if named && !slices.Contains(nodes, id) && !(len(nodes) <= 1 && id == 0) {
		have := "0"
		if len(nodes) > 0 {
			have = FormatCPUList(nodes)
		}
		return Placement{}, fmt.Errorf("%s=%d: this host has NUMA node(s) %s; name one of them, device for %s's, or off", VarNUMA, id, have, dev)
	}
	if len(nodes) < 2 {
		return Placement{}, nil
	}
	if !named {
		if id = DeviceNode(sys, dev); id < 0 {
			return Placement{}, nil
		}
	}
	local, _ := readList(sys, fmt.Sprintf("sys/devices/system/node/node%d/cpulist", id))
	var cpus []int
	for _, c := range allowed {
		if slices.Contains(local, c) {
			cpus = append(cpus, c)
		}
	}
	return Placement{Node: OnNode(id), CPUs: cpus}, nil
}

// Place is Place for this host and c's RDMABENCH_NUMA.
func (c Config) Place(dev string) (Placement, error) {
	allowed, err := AllowedCPUs()
	if err != nil && !c.NoPin && len(c.CPUs) < 2 {
		return Placement{}, err
	}
	return Place(os.DirFS("/"), dev, c.NUMA, allowed)
}

// OnlineNodes returns the NUMA nodes the kernel lists as online, nil when
// it lists none (a kernel without NUMA).
func OnlineNodes(sys fs.FS) []int {
	nodes, _ := readList(sys, "sys/devices/system/node/online")
	return nodes
}

// DeviceNode returns the NUMA node of RDMA device dev, or -1 when unknown:
// its PCI function's (/sys/class/infiniband/DEV/device/numa_node), or, for
// a software device with no PCI function (rxe), that of the netdev it sits
// on (its first port's GID 0 names it).
func DeviceNode(sys fs.FS, dev string) int {
	if dev == "" || strings.ContainsAny(dev, "/\x00") {
		return -1
	}
	ib := "sys/class/infiniband/" + dev
	if n, ok := readNode(sys, ib+"/device/numa_node"); ok {
		return n
	}
	ports, err := fs.ReadDir(sys, ib+"/ports")
	if err != nil || len(ports) == 0 {
		return -1
	}
	ndev, err := readSmall(sys, ib+"/ports/"+ports[0].Name()+"/gid_attrs/ndevs/0")
	if err != nil || ndev == "" || strings.ContainsAny(ndev, "/\x00") || ndev == "." || ndev == ".." {
		return -1
	}
	if n, ok := readNode(sys, path.Join("sys/class/net", ndev, "device/numa_node")); ok {
		return n
	}
	// A netdev whose device is no PCI function (virtio-net's is virtioN,
	// under the PCI function): the nearest ancestor in sysfs that has a
	// node. /sys/class/net/NAME links to the netdev's place under
	// /sys/devices; a virtual netdev (veth) has none.
	target, err := fs.ReadLink(sys, "sys/class/net/"+ndev)
	if err != nil {
		return -1
	}
	dir := path.Join("sys/class/net", target)
	for range 16 { // sysfs paths are a few levels deep; bound the walk
		dir = path.Dir(dir)
		if !strings.HasPrefix(dir, "sys/devices/") {
			break
		}
		if n, ok := readNode(sys, dir+"/numa_node"); ok {
			return n
		}
	}
	return -1
}

func readNode(sys fs.FS, name string) (int, bool) {
	s, err := readSmall(sys, name)
	if err != nil {
		return -1, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && n <= maxNode
}

// readList reads a sysfs file in the kernel's list form ("0-3,8").
func readList(sys fs.FS, name string) ([]int, error) {
	s, err := readSmall(sys, name)
	if err != nil {
		return nil, err
	}
	return ParseCPUList(s)
}

// readSmall reads a sysfs attribute of at most a page, trimmed.
func readSmall(sys fs.FS, name string) (string, error) {
	f, err := sys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, err := f.Read(b)
	if err != nil && n == 0 {
		return "", err
	}
	if n == len(b) {
		return "", errors.New(name + ": longer than a page")
	}
	return strings.TrimSpace(string(b[:n])), nil
}
