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

// RC reposts each receive as perftest does; UD and UC pre-post as many as
// perftest does and repost none until few are left.
func TestRecvPlan(t *testing.T) {
	for _, tc := range []struct {
		tr                 spec.Transport
		maxWR, maxCQE      int
		depth, repostBelow int
	}{
		{spec.RC, 16384, 32767, 512, 0},       // rxe
		{spec.UD, 16384, 32767, 16000, 512},   // rxe
		{spec.UC, 32768, 4194303, 16000, 512}, // mlx5
		{spec.UD, 4096, 65535, 4096, 512},     // a small queue: what it allows
		{spec.UD, 16384, 1000, 512, 0},        // too small a CQ to pre-post: as RC
		{spec.RC, 100, 32767, 100, 0},
		{spec.RC, 0, 0, 1, 0},
	} {
		d, r := RecvPlan(tc.tr, tc.maxWR, tc.maxCQE)
		assert.Equal(t, [2]int{tc.depth, tc.repostBelow}, [2]int{d, r}, "%v maxWR %d maxCQE %d", tc.tr, tc.maxWR, tc.maxCQE)
	}
}
