package target

import (
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
)

var host = fstest.MapFS{
	"sys/class/infiniband/mlx5_0/ports/1/state": {Data: []byte("1: DOWN\n")},
	"sys/class/infiniband/mlx5_1/ports/1/state": {Data: []byte("4: ACTIVE\n")},
}

func vars(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolve(t *testing.T) {
	allowed, err := env.AllowedCPUs()
	require.NoError(t, err)
	first, last := allowed[0], allowed[len(allowed)-1]
	both := fmt.Sprintf("%d,%d", last, first)
	tg, err := Resolve(host, "", "", vars(map[string]string{"RDMABENCH_CPUS": both}))
	require.NoError(t, err)
	assert.Equal(t, Target{Device: "mlx5_1", CPUs: []int{last, first}}, tg)

	tg, err = Resolve(host, "mlx5_0", fmt.Sprint(first), vars(map[string]string{"RDMABENCH_DEVICE": "mlx5_1", "RDMABENCH_CPUS": both}))
	require.NoError(t, err)
	assert.Equal(t, Target{Device: "mlx5_0", CPUs: []int{first}}, tg, "flags win over the environment")

	tg, err = Resolve(host, "", "none", vars(nil))
	require.NoError(t, err)
	assert.Nil(t, tg.CPUs)

	tg, err = Resolve(host, "", "", vars(nil))
	require.NoError(t, err)
	assert.NotEmpty(t, tg.CPUs, "the last CPUs this process may use")

	_, err = Resolve(host, "mlx9", "", vars(nil))
	assert.ErrorContains(t, err, `no RDMA device "mlx9"`)
	_, err = Resolve(host, "", "", vars(map[string]string{"RDMABENCH_CPUS": "a,b"}))
	assert.ErrorContains(t, err, `RDMABENCH_CPUS="a,b": not a CPU list: "a": "a" is not a CPU number`)
	// As the benchmark refuses them (env.Config.Check, env.ParseCPUs).
	_, err = Resolve(host, "", "", vars(map[string]string{"RDMABENCH_CPUS": "9999"}))
	assert.ErrorContains(t, err, `RDMABENCH_CPUS="9999": not a CPU list: "9999": CPU 9999 is above 8191`)
	_, err = Resolve(host, "", "", vars(map[string]string{"RDMABENCH_CPUS": "8191"}))
	assert.ErrorContains(t, err, "RDMABENCH_CPUS=8191: this process may run on CPUs "+env.FormatCPUList(allowed)+"; e.g. RDMABENCH_CPUS=")
	_, err = Resolve(host, "", "8191", vars(nil))
	assert.ErrorContains(t, err, "-cpus=8191: this process may run on CPUs ")
	_, err = Resolve(host, "", "1,2,3", vars(nil))
	assert.ErrorContains(t, err, "names 3 CPUs")
}
