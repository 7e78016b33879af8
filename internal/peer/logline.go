package peer

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// oneLine makes logf write each line as exactly one line of plain text,
// whatever the strings in it: a client's Error text, Hello, address or
// anything else from outside is logged with its control characters
// (newlines first), line and paragraph separators and bidirectional
// overrides escaped, so that no client, authenticated or not, can forge
// a log line or hide part of one. It is the one sanitizer of what a
// Server logs.
func oneLine(logf func(string, ...any)) func(string, ...any) {
	return func(format string, args ...any) {
		logf("%s", escapeLine(fmt.Sprintf(format, args...)))
	}
}

// escapeLine returns s with every rune that could break or disguise a log
// line written as \n, \r, \t, \xNN or \uNNNN, and invalid UTF-8 as \xNN.
func escapeLine(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r) {
			return true
		}
		i += n
	}
	return false
}

// unsafeRune: control characters (C0, DEL, C1), the line and paragraph
// separators, and the format characters (bidirectional overrides and
// isolates, zero-width joiners) that reorder or hide text on a terminal.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r)
}
