// Package cmdout quotes what a child program printed in the error that
// says it failed, so that the reason shows without opening a log.
package cmdout

import "bytes"

// Tail returns the last lines of a program's output (at most lines of
// them), indented one tab each, after "; output ends:" and a newline, to
// append to an error; "" when the program printed nothing.
func Tail(out []byte, lines int) string {
	out = bytes.TrimRight(out, "\n")
	if len(out) == 0 {
		return ""
	}
	ls := bytes.Split(out, []byte("\n"))
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return "; output ends:\n\t" + string(bytes.Join(ls, []byte("\n\t")))
}
