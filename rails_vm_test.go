package rdmabench

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/testenv"
)

// TestRailsNameEachRail: RDMABENCH_DEVICE=rxe0,rxe1 (the VM's two devices,
// on the two ends of a veth) makes one run measure each rail, named in a
// /rail=DEV level, under configuration lines that name its device; the
// result file reads as benchfmt and splits by rail.
func TestRailsNameEachRail(t *testing.T) {
	c := testenv.MustHaveRDMA(t)
	second := testenv.MustHaveSecondDevice(t, c)
	rails := c.Device + "," + second
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^BenchmarkRDMAWrite$", "-test.benchtime=50x", "-test.cpu=1")
	cmd.Env = append(os.Environ(), env.VarDevice+"="+rails, env.VarSizes+"=2", env.VarWarmup+"=10")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	devOf := map[string]string{} // benchmark name -> rdma-device in force
	r := benchfmt.NewReader(strings.NewReader(string(out)), "rails.txt")
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			devOf[string(res.Name.Full())] = string(res.GetConfig("rdma-device"))
		}
	}
	require.NoError(t, r.Err())
	t.Logf("results by device: %v", devOf)
	for _, dev := range []string{c.Device, second} {
		name := "RDMAWrite/rail=" + dev + "/size=2"
		got, ok := devOf[name]
		if assert.True(t, ok, "a result named %s in:\n%s", name, out) {
			assert.Equal(t, dev, got, "%s runs under rdma-device: %s", name, dev)
		}
	}
	assert.Len(t, devOf, 2, "one result per rail, none without a rail")
}
