// Package texttest checks the text that a command or a report prints.
// Only tests import it.
package texttest

import (
	"strings"
	"testing"
)

// ContainsAll fails the test for each of wants that text, the output
// called name in the message, lacks.
func ContainsAll(t testing.TB, name, text string, wants ...string) {
	t.Helper()
	for _, s := range wants {
		if !strings.Contains(text, s) {
			t.Errorf("%s lacks %q:\n%s", name, s, text)
		}
	}
}
