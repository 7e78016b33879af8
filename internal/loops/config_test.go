package loops

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rdmabench/rdmabench/internal/spec"
)

// A loop refuses what its transport or operation cannot do before it
// touches a device. (The loops themselves run on rxe: rdmalat's tests.)
func TestConfigRefuses(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Op: spec.Read, Transport: spec.UC}, "read over uc: UC has no RDMA READ"},
		{Config{Op: spec.Write, Transport: spec.UD}, "write over ud: UD carries sends only"},
		{Config{Op: spec.Write, Transport: spec.RC, Events: true}, "events: write has no completion to wait for"},
		{Config{Op: spec.Send, Transport: spec.RC}, "QP, SendCQ and MR are required"},
		{Config{Op: 0, Transport: spec.RC}, "unknown operation 0"},
	} {
		err := tc.cfg.check()
		assert.ErrorContains(t, err, tc.want, "%+v", tc.cfg)
	}
}
