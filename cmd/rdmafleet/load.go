package main

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
)

// planLoad reads RDMABENCH_LOAD with the benchmark's own parser, so that a
// value every pair's benchmark would refuse fails before a step runs, and
// describes the load for the plan's header and the run's log ("" for
// none). The agents pass the variable on to each pair's benchmark, whose
// stream takes a second session of dst's rdmapeer: a pair's rdmapeer
// serves that pair alone, up to 4 sessions and 2 per client (its
// defaults), so the stream always finds its slot.
func planLoad(getenv func(string) string) (string, error) {
	n, err := jobdir.LoadSize(getenv)
	if err != nil {
		return "", fmt.Errorf("%w (rdmafleet passes it to every pair's benchmark)", err)
	}
	if n == 0 {
		return "", nil
	}
	return fmt.Sprintf("each pair's latency is measured under load (%s=%s): src's benchmark streams %d-byte RDMA WRITEs into a second session of dst's rdmapeer on the device measured; the stream's load-MB/s is kept in each pair's results and shown in matrix.txt, never judged",
		env.VarLoad, strings.TrimSpace(getenv(env.VarLoad)), n), nil
}
