package rdmalat

import (
	"fmt"

	"github.com/rdmabench/rdmabench/env"
)

// DefaultCPUs returns the CPUs the benchmarks pin the loopback initiator
// and responder to (LoopbackConfig.CPUs): env's choice
// (env.Config.PinCPUs with nothing named), the last two this process may
// run on.
func DefaultCPUs() ([2]env.CPU, error) {
	cpus, err := env.Config{}.PinCPUs()
	if err != nil {
		return cpus, fmt.Errorf("rdmalat: %w", err)
	}
	return cpus, nil
}

// pinThread locks the calling goroutine to its OS thread and pins that
// thread to cpu (env.CPU.PinThread), naming the variable that chose it
// when the kernel refuses.
func pinThread(cpu env.CPU) (restore func(), err error) {
	restore, err = cpu.PinThread()
	if err != nil {
		return nil, fmt.Errorf("rdmalat: %w (%s chooses the CPUs)", err, env.VarCPUs)
	}
	return restore, nil
}
