package peer

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/oob"
)

// report logs one session in one line.
func (s *Server) report(r SessionReport) {
	s.count(func(st *Stats) {
		st.Sessions++
		if r.Err != nil {
			st.Failed++
		}
	})
	s.cfg.Logf("%s", FormatReport(r))
}

// FormatReport returns the log line of a session: client, operation,
// sizes, runs, round trips, duration and result.
func FormatReport(r SessionReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "session %s", r.Client)
	switch {
	case r.Params == (oob.Params{}):
		b.WriteString(" no session")
	case r.Params.Flags&oob.FlagLoad != 0:
		fmt.Fprintf(&b, " device=%s load-stream op=%v max-size=%d runs=%d bytes=%d",
			r.Device, r.Params.Op, r.Params.Size, r.Runs, r.Bytes)
	default:
		sizes := make([]string, len(r.Sizes))
		for i, n := range r.Sizes {
			sizes[i] = strconv.Itoa(n)
		}
		if len(sizes) == 0 {
			sizes = []string{"none"}
		}
		fmt.Fprintf(&b, " device=%s op=%v max-size=%d sizes=%s runs=%d round-trips=%d",
			r.Device, r.Params.Op, r.Params.Size, strings.Join(sizes, ","), r.Runs, r.RoundTrips)
	}
	fmt.Fprintf(&b, " duration=%v", r.Duration.Round(time.Millisecond))
	if r.Err != nil {
		fmt.Fprintf(&b, " result=error: %v", r.Err)
	} else {
		b.WriteString(" result=ok")
	}
	return b.String()
}
