package verbs

import (
	"math"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestExplainRegMR: ibv_reg_mr's ENOMEM names RLIMIT_MEMLOCK, the size and
// how to raise it only where the limit applies (finite, no CAP_IPC_LOCK).
func TestExplainRegMR(t *testing.T) {
	enomem := func() error { return &Error{Op: "ibv_reg_mr", Err: syscall.ENOMEM} }
	user := memlock{known: true, cur: 64 << 10, max: 64 << 10}

	err := explainRegMR(enomem(), 256<<10, user)
	assert.ErrorIs(t, err, ErrMemlock)
	assert.ErrorIs(t, err, syscall.ENOMEM)
	for _, want := range []string{"registering 256 KiB pins it", "at most 64 KiB in all (RLIMIT_MEMLOCK, hard limit 64 KiB)",
		"ulimit -l unlimited", "ulimit -l 320", "/etc/security/limits.conf", "LimitMEMLOCK=infinity"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Contains(t, explainRegMR(enomem(), 1000, memlock{known: true, cur: 8 << 20, max: math.MaxUint64}).Error(),
		"registering 1000 bytes pins it; this process may pin at most 8192 KiB in all (RLIMIT_MEMLOCK, hard limit unlimited)")

	for name, m := range map[string]memlock{
		"unlimited":    {known: true, cur: math.MaxUint64, max: math.MaxUint64},
		"CAP_IPC_LOCK": {known: true, cur: 64 << 10, max: 64 << 10, ipcLock: true},
		"unknown":      {},
	} {
		err := explainRegMR(enomem(), 256<<10, m)
		assert.NotErrorIs(t, err, ErrMemlock, name)
		assert.ErrorIs(t, err, syscall.ENOMEM, name)
	}
	other := &Error{Op: "ibv_reg_mr", Err: syscall.EINVAL}
	assert.NotErrorIs(t, explainRegMR(other, 256<<10, user), ErrMemlock)
}
