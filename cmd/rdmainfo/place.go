package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/env"
)

// Where make bench runs the benchmarks.
const (
	placeLocal = "local" // on this machine's RDMA device
	placeVM    = "vm"    // in the soft-RoCE VM (bin/rxevm)
)

// choosePlace decides where make bench runs, from the configuration and
// the result of testenv.Usable (dev, or why no device is usable). It
// returns the place and a sentence saying why, or an error when the
// environment names something that cannot be used here: a set variable is
// a promise, so that is never quietly moved to the VM.
func choosePlace(forceVM bool, c env.Config, dev string, devErr error) (place, why string, err error) {
	switch {
	case forceVM:
		return placeVM, "VM=1: running in the soft-RoCE VM (bin/rxevm)", nil
	case devErr == nil:
		return placeLocal, fmt.Sprintf("running on the local RDMA device %s (make bench VM=1 runs in the soft-RoCE VM instead)", dev), nil
	}
	var named []string
	for _, v := range [][2]string{{env.VarDevice, c.Device}, {env.VarPeerDevice, c.PeerDevice}, {env.VarPeer, c.Peer}} {
		if v[1] != "" {
			named = append(named, v[0])
		}
	}
	if len(named) == 0 && errors.Is(devErr, env.ErrNoDevice) {
		return placeVM, fmt.Sprintf("no local RDMA device (%v): running in the soft-RoCE VM (bin/rxevm)", devErr), nil
	}
	if len(named) > 0 && !errors.Is(devErr, env.ErrNoPort) {
		return "", "", fmt.Errorf("%w; unset %s to run in the soft-RoCE VM, or run make bench VM=1", devErr, strings.Join(named, " and "))
	}
	return "", "", devErr // the device is here, the port asked for is not: the message says what to type
}
