package driver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
	"github.com/rdmabench/rdmabench/internal/fleet/jobreport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestCheck: what fails before any step runs, each naming what to change.
func TestCheck(t *testing.T) {
	srun := filepath.Join(t.TempDir(), "srun")
	require.NoError(t, os.WriteFile(srun, []byte("#!/bin/sh\n"), 0o755))
	good := Driver{Dir: filepath.Join(t.TempDir(), "job"), Srun: srun, Report: jobreport.DefaultOptions}
	require.NoError(t, good.Check())

	d := good
	d.Srun = "/nonexistent/srun"
	assert.ErrorContains(t, d.Check(), "-srun /nonexistent/srun: ")
	assert.ErrorContains(t, d.Check(), "run it inside sbatch")

	d = good
	d.Report.Thresholds.MADs = 0
	assert.ErrorContains(t, d.Check(), "-mads 0: want a ratio above 1 and a positive count")

	d = good
	require.NoError(t, jobdir.WriteAtomic(filepath.Join(d.Dir, jobdir.PlanFile), []byte("1 a b\n")))
	assert.EqualError(t, d.Check(), d.Dir+" already holds a run (plan.txt): choose another -dir")
}
