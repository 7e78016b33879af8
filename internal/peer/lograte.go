package peer

import (
	"fmt"
	"sync"
	"time"
)

// DefaultLogInterval is how often a Server logs a refusal of one kind: a
// flood of strangers writes one line per reason per interval, with a count
// of the lines left out, instead of one per connection.
const DefaultLogInterval = 10 * time.Second

// rateLog passes on at most one line per reason per interval; the next
// line of a reason says how many were left out since the last.
type rateLog struct {
	logf     func(format string, args ...any)
	interval time.Duration
	now      func() time.Time

	mu      sync.Mutex
	reasons map[string]*rateReason
}

type rateReason struct {
	last       time.Time
	suppressed int
}

func newRateLog(logf func(string, ...any), interval time.Duration) *rateLog {
	return &rateLog{logf: logf, interval: interval, now: time.Now, reasons: map[string]*rateReason{}}
}

// printf logs the line for reason unless one was logged within the
// interval.
func (l *rateLog) printf(reason, format string, args ...any) {
	l.mu.Lock()
	r := l.reasons[reason]
	if r == nil {
		r = &rateReason{}
		l.reasons[reason] = r
	}
	now := l.now()
	if !r.last.IsZero() && now.Sub(r.last) < l.interval {
		r.suppressed++
		l.mu.Unlock()
		return
	}
	line := fmt.Sprintf(format, args...)
	if r.suppressed > 0 {
		line += fmt.Sprintf(" (and %d more %s in the last %v, not logged)", r.suppressed, reason, now.Sub(r.last).Round(time.Second))
	}
	r.last, r.suppressed = now, 0
	l.mu.Unlock()
	l.logf("%s", line)
}

// flush logs the counts still left out, at shutdown.
func (l *rateLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for reason, r := range l.reasons {
		if r.suppressed > 0 {
			l.logf("%d more %s since the last logged, not logged", r.suppressed, reason)
			r.suppressed = 0
		}
	}
}
