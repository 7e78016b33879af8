package agent

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Options say how one pair is measured; rdmafleet run passes them on to
// every agent.
type Options struct {
	Bench     string // the benchmark binary (go test -c -o rdmabench.test .)
	Peer      string // rdmapeer
	Benchmark string // -test.bench
	Benchtime string // -test.benchtime
	Count     int    // -test.count
	PortBase  int
	Timeout   time.Duration // the pair's deadline, from the start of the agents
	Hosts     string        // /etc/hosts-format file: node name -> address
	// Rails, if set, are the devices of each node measured rail by rail
	// ("mlx5_0,mlx5_1" or "all"): src's benchmark runs with them as
	// RDMABENCH_DEVICE, dst's rdmapeer serves them (-device), and each
	// rail of src meets dst's device of the same name: rail with rail.
	Rails string
}

// PortSpan bounds the ports a job uses: two per pair, at most this many
// pairs apart before they are reused.
const PortSpan = 500

// Check says what is wrong with o, naming the flag to change.
func (o *Options) Check() error {
	for _, bin := range []struct{ flag, path string }{{"-bench", o.Bench}, {"-peer", o.Peer}} {
		st, err := os.Stat(bin.path)
		if err != nil {
			return fmt.Errorf("%s %s: %w (build it, or name it with %s)", bin.flag, bin.path, errors.Unwrap(err), bin.flag)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("%s %s: not an executable file", bin.flag, bin.path)
		}
	}
	if o.Count < 1 {
		return fmt.Errorf("-count %d: want at least 1", o.Count)
	}
	if o.PortBase < 1024 || o.PortBase+2*PortSpan > 65535 {
		return fmt.Errorf("-port-base %d: want 1024 to %d", o.PortBase, 65535-2*PortSpan)
	}
	if err := checkRails(o.Rails); err != nil {
		return err
	}
	if o.Timeout < time.Second {
		return fmt.Errorf("-timeout %v: want at least 1s", o.Timeout)
	}
	return nil
}

// Ports returns the rdmapeer port and the agents' control port of the
// index-th pair of a plan.
func (o *Options) Ports(index int) (peer, control int) {
	p := o.PortBase + 2*(index%PortSpan)
	return p, p + 1
}

// checkRails checks -rails: empty, "all", or device names separated by
// commas, each once.
func checkRails(v string) error {
	if v == "" || v == "all" {
		return nil
	}
	seen := map[string]bool{}
	for _, d := range strings.Split(v, ",") {
		switch {
		case d == "" || d == "all" || strings.ContainsAny(d, " \t/=\x00"):
			return fmt.Errorf("-rails %q: %q is not a device name; write the devices of a node separated by commas (-rails mlx5_0,mlx5_1), or all", v, d)
		case seen[d]:
			return fmt.Errorf("-rails %q: %s is named twice; name each rail once", v, d)
		}
		seen[d] = true
	}
	return nil
}
