package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/rdmabench/rdmabench/env"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseCPU(t *testing.T) {
	allowed, err := env.AllowedCPUs()
	assert.NoError(t, err)
	last := allowed[len(allowed)-1]
	got, err := parseCPU(fmt.Sprint(last))
	assert.NoError(t, err)
	assert.Equal(t, env.PinTo(last), got)
	got, err = parseCPU("none")
	assert.NoError(t, err)
	assert.Equal(t, env.CPU{}, got, "unpinned")
	for v, want := range map[string]string{
		"-1":   `-cpu "-1": not a CPU list: "-1": "" is not a CPU number; want one CPU, such as -cpu 1, or -cpu none`,
		"0,1":  `-cpu "0,1": 2 CPUs; want one CPU, such as -cpu 1, or -cpu none`,
		"8191": "-cpu=8191: this process may run on CPUs " + env.FormatCPUList(allowed),
	} {
		_, err := parseCPU(v)
		assert.ErrorContains(t, err, want, "-cpu %s", v)
	}
}
