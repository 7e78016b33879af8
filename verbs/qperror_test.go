package verbs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestExplainCreateQP: ibv_create_qp's failure is called an inline problem
// only when dropping inline data helps (or the probed limit says so), a
// missing QP type only when even the smallest QP of it is refused, and
// queue sizes when the smallest one is accepted. The trials stand for the
// device's answers (recorded from providers' code: bnxt_re and EFA refuse
// UC with EINVAL or no errno whatever the inline size).
func TestExplainCreateQP(t *testing.T) {
	asked := qpCaps{MaxSendWR: 1, MaxRecvWR: 512, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 236}
	fail := func(errno syscall.Errno) error { return &Error{Op: "ibv_create_qp", Err: errno} }
	ok := func(qpCaps) error { return nil }
	okWithoutInline := func(c qpCaps) error {
		if c.MaxInlineData > 0 {
			return fail(syscall.EINVAL)
		}
		return nil
	}
	never := func(errno syscall.Errno) qpTrial { return func(qpCaps) error { return fail(errno) } }
	onlySmallest := func(c qpCaps) error {
		if c.MaxRecvWR > 1 {
			return fail(syscall.EINVAL)
		}
		return nil
	}
	limit := func(n int) func() (int, error) { return func() (int, error) { return n, nil } }
	noLimit := func() (int, error) { return 0, fail(syscall.EINVAL) }

	for _, tc := range []struct {
		name      string
		typ       QPType
		asked     qpCaps
		errno     syscall.Errno
		trial     qpTrial
		limit     func() (int, error)
		isInline  bool
		isUnsupp  bool
		wantInMsg string
	}{
		{"inline above the limit", RC, asked, syscall.EINVAL, okWithoutInline, limit(64), true, false,
			"max_inline_data 236 is above what dev0 accepts on RC queue pairs (at most 64)"},
		{"limit says so though the retry fails", UD, asked, syscall.EINVAL, never(syscall.EINVAL), limit(32), true, false,
			"on UD queue pairs (at most 32)"},
		{"UC lacking, with inline (bnxt_re: no errno)", UC, asked, syscall.EIO, never(syscall.EIO), noLimit, false, true,
			"dev0 does not support UC queue pairs"},
		{"UC lacking, without inline", UC, qpCaps{MaxSendWR: 1, MaxRecvWR: 1}, syscall.EOPNOTSUPP, never(syscall.EOPNOTSUPP), noLimit, false, true,
			"does not support UC"},
		{"queue sizes", RC, asked, syscall.EINVAL, onlySmallest, limit(256), false, false,
			"refused these queue sizes (send 1, receive 512 work requests"},
		{"out of memory keeps its errno", RC, qpCaps{MaxSendWR: 1}, syscall.ENOMEM, ok, limit(256), false, false,
			"cannot allocate memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := explainCreateQP("dev0", tc.typ, tc.asked, fail(tc.errno), tc.trial, tc.limit)
			assert.Equal(t, tc.isInline, errors.Is(err, ErrInlineTooLarge), "%v", err)
			assert.Equal(t, tc.isUnsupp, errors.Is(err, errors.ErrUnsupported), "%v", err)
			assert.ErrorIs(t, err, tc.errno, "the provider's errno is kept")
			assert.Contains(t, err.Error(), tc.wantInMsg)
			if !tc.isInline {
				assert.NotContains(t, err.Error(), "inline 236 is above")
			}
		})
	}
}
