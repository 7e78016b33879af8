// Package procout quotes the end of a child program's output in an error
// message, so that a failure says what the program last said.
package procout

import "bytes"

// lastLines returns out's last n lines, without trailing newlines; none
// when out is empty.
func lastLines(out []byte, n int) [][]byte {
	out = bytes.TrimRight(out, "\n")
	if len(out) == 0 {
		return nil
	}
	lines := bytes.Split(out, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// OneLine returns "; output ends: A | B | C" for out's last n lines, or ""
// when out is empty: for a reason that must stay on one line.
func OneLine(out []byte, n int) string {
	lines := lastLines(out, n)
	if lines == nil {
		return ""
	}
	return "; output ends: " + string(bytes.Join(lines, []byte(" | ")))
}

// Indented returns "; output ends:" and out's last n lines, each on a line
// of its own after a tab, or "" when out is empty.
func Indented(out []byte, n int) string {
	lines := lastLines(out, n)
	if lines == nil {
		return ""
	}
	return "; output ends:\n\t" + string(bytes.Join(lines, []byte("\n\t")))
}
