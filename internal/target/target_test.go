package target

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var host = fstest.MapFS{
	"sys/class/infiniband/mlx5_0/ports/1/state": {Data: []byte("1: DOWN\n")},
	"sys/class/infiniband/mlx5_1/ports/1/state": {Data: []byte("4: ACTIVE\n")},
}

func vars(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolve(t *testing.T) {
	tg, err := Resolve(host, "", "", vars(map[string]string{"RDMABENCH_CPUS": "2,3"}))
	require.NoError(t, err)
	assert.Equal(t, Target{Device: "mlx5_1", CPUs: []int{2, 3}}, tg)

	tg, err = Resolve(host, "mlx5_0", "5", vars(map[string]string{"RDMABENCH_DEVICE": "mlx5_1", "RDMABENCH_CPUS": "2,3"}))
	require.NoError(t, err)
	assert.Equal(t, Target{Device: "mlx5_0", CPUs: []int{5}}, tg, "flags win over the environment")

	tg, err = Resolve(host, "", "none", vars(nil))
	require.NoError(t, err)
	assert.Nil(t, tg.CPUs)

	tg, err = Resolve(host, "", "", vars(nil))
	require.NoError(t, err)
	assert.NotEmpty(t, tg.CPUs, "the last CPUs this process may use")

	_, err = Resolve(host, "mlx9", "", vars(nil))
	assert.ErrorContains(t, err, `no RDMA device "mlx9"`)
	_, err = Resolve(host, "", "", vars(map[string]string{"RDMABENCH_CPUS": "a,b"}))
	assert.ErrorContains(t, err, `RDMABENCH_CPUS="a,b": "a" is not a CPU number`)
	_, err = Resolve(host, "", "1,2,3", vars(nil))
	assert.ErrorContains(t, err, "names 3 CPUs")
}
