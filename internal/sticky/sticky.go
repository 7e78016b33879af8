// Package sticky prints a report line by line and keeps the first write
// error, so that a report's code says what to print and checks once.
package sticky

import (
	"fmt"
	"io"
)

// A Printer writes to W until a write fails; Err is the first failure.
type Printer struct {
	W   io.Writer
	Err error
}

// Printf writes as fmt.Fprintf does, unless a write has failed already.
func (p *Printer) Printf(format string, args ...any) {
	if p.Err == nil {
		_, p.Err = fmt.Fprintf(p.W, format, args...)
	}
}
