package cmdout

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		out   string
		lines int
		want  string
	}{
		{"", 3, ""},
		{"\n\n", 3, ""},
		{"one\n", 3, "; output ends:\n\tone"},
		// Five lines, the last three kept; trailing newlines dropped.
		{"1\n2\n3\n4\n5\n\n", 3, "; output ends:\n\t3\n\t4\n\t5"},
		{"a\nb", 2, "; output ends:\n\ta\n\tb"},
	} {
		if got := Tail([]byte(tc.out), tc.lines); got != tc.want {
			t.Errorf("Tail(%q, %d) = %q, want %q", tc.out, tc.lines, got, tc.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct {
		out   string
		lines int
		want  string
	}{
		{"", 6, ""},
		{"\n\n", 6, ""},
		{"only", 6, "; output ends: only"}, // fewer lines than asked
		// Nine lines, the last three kept; trailing newlines dropped.
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n\n\n", 3, "; output ends: 7 | 8 | 9"},
	} {
		if got := OneLine([]byte(tc.out), tc.lines); got != tc.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tc.out, tc.lines, got, tc.want)
		}
	}
}
