// Package cmdout quotes what a child program printed in the error that
// says it failed, so that the reason shows without opening a log.
package cmdout

import "bytes"

// Tail returns the last lines of a program's output (at most lines of
// them), indented one tab each, after "; output ends:" and a newline, to
// append to an error; "" when the program printed nothing.
func Tail(out []byte, lines int) string {
	ls := lastLines(out, lines)
	if ls == nil {
		return ""
	}
	return "; output ends:\n\t" + string(bytes.Join(ls, []byte("\n\t")))
}

// OneLine is Tail on one line, "; output ends: A | B | C": for a reason
// that must stay on one line (a fleet job's results).
func OneLine(out []byte, lines int) string {
	ls := lastLines(out, lines)
	if ls == nil {
		return ""
	}
	return "; output ends: " + string(bytes.Join(ls, []byte(" | ")))
}

// lastLines returns out's last n lines, without trailing newlines; nil
// when out is empty.
func lastLines(out []byte, n int) [][]byte {
	out = bytes.TrimRight(out, "\n")
	if len(out) == 0 {
		return nil
	}
	ls := bytes.Split(out, []byte("\n"))
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return ls
}
