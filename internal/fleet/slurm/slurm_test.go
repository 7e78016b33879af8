package slurm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSelfNode(t *testing.T) {
	env := map[string]string{"SLURM_STEP_NODELIST": "n[1-3],x", "SLURM_PROCID": "3"}
	n, err := SelfNode(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, "x", n)
	env["SLURMD_NODENAME"] = "n2"
	n, err = SelfNode(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, "n2", n, "SLURMD_NODENAME wins")
}

func TestJobNodes(t *testing.T) {
	env := map[string]string{"SLURM_NODELIST": "old[1-2]"}
	getenv := func(k string) string { return env[k] }
	n, err := JobNodes("", getenv)
	require.NoError(t, err)
	assert.Equal(t, []string{"old1", "old2"}, n, "the older variable")
	env["SLURM_JOB_NODELIST"] = "n[1-3]"
	n, err = JobNodes("", getenv)
	require.NoError(t, err)
	assert.Equal(t, []string{"n1", "n2", "n3"}, n)
	n, err = JobNodes("a,b", getenv)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, n, "-nodes wins")
	_, err = JobNodes("n[1-", getenv)
	assert.ErrorContains(t, err, "-nodes: ")
}

func TestJobDefaults(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	now := time.Date(2026, 12, 1, 23, 5, 9, 0, time.UTC)
	assert.Equal(t, "rdmafleet-20261201-230509", JobDir(getenv, now))
	assert.Equal(t, uint64(1), JobSeed(getenv))
	env["SLURM_JOB_ID"], env["SLURM_SUBMIT_DIR"] = "4242", "/home/u"
	assert.Equal(t, "/home/u/rdmafleet-4242", JobDir(getenv, now))
	assert.Equal(t, uint64(4242), JobSeed(getenv))
}
