package verbs

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrInlineTooLarge is the cause when ibv_create_qp refused a queue pair
// because of its inline size: the same queue pair without inline data was
// accepted, or the device's probed limit is below what was asked.
var ErrInlineTooLarge = errors.New("inline size above the device's limit")

// qpTrial creates a queue pair of the failed one's type with other
// capabilities and destroys it at once, returning ibv_create_qp's error.
type qpTrial func(caps qpCaps) error

// explainCreateQP finds out why ibv_create_qp failed, by trying again,
// because its errno alone points the wrong way: most providers answer
// EINVAL (bnxt_re no errno at all) both for an inline size above their
// limit and for a QP type they lack. The cause is named only once shown:
//   - inline: the same QP without inline data is accepted, or the
//     device's probed limit for this type is below the size asked;
//   - QP type: even the smallest QP of this type (one work request, one
//     scatter entry, no inline) is refused with EINVAL, EOPNOTSUPP,
//     EPROTONOSUPPORT or no errno;
//   - sizes: the smallest QP is accepted, so the queue sizes are too big.
//
// Anything else (ENOMEM: out of QPs or locked memory) keeps its errno.
// limit returns the probed inline limit for the type.
func explainCreateQP(dev string, typ QPType, asked qpCaps, err error, trial qpTrial, limit func() (int, error)) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	errno, _ := e.Err.(syscall.Errno)
	if asked.MaxInlineData > 0 {
		noInline := asked
		noInline.MaxInlineData = 0
		lim, lerr := limit()
		if trial(noInline) == nil || (lerr == nil && uint32(lim) < asked.MaxInlineData) {
			e.Err = fmt.Errorf("%w: %w", ErrInlineTooLarge, e.Err)
			e.Detail = fmt.Sprintf("max_inline_data %d is above what %s accepts on %v queue pairs", asked.MaxInlineData, dev, typ)
			if lerr == nil {
				e.Detail += fmt.Sprintf(" (at most %d)", lim)
			}
			return err
		}
	}
	if errno == syscall.ENOMEM {
		return err
	}
	smallest := qpCaps{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}
	switch terr := trial(smallest); {
	case terr == nil:
		e.Detail = fmt.Sprintf("%s refused these queue sizes (send %d, receive %d work requests, %d/%d scatter entries, inline %d) but accepts a %v queue pair of one work request: ibv_devinfo -v shows max_qp_wr and max_sge",
			dev, asked.MaxSendWR, asked.MaxRecvWR, asked.MaxSendSGE, asked.MaxRecvSGE, asked.MaxInlineData, typ)
	case isUnsupportedErrno(terr):
		e.Err = fmt.Errorf("%w: %w", errors.ErrUnsupported, e.Err)
		e.Detail = fmt.Sprintf("%s does not support %v queue pairs: even the smallest one is refused", dev, typ)
	}
	return err
}

// isUnsupportedErrno reports whether err is an errno a provider gives for
// a QP type it lacks.
func isUnsupportedErrno(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Err {
	case syscall.EINVAL, syscall.EOPNOTSUPP, syscall.EPROTONOSUPPORT, syscall.EIO:
		return true
	}
	return false
}
