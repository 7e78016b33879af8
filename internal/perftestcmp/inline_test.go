package perftestcmp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/spec"
)

// TestInlineDefault: left to the device, each row gets perftest's own
// latency default for the device's family, the same for both sides:
// per-test sizes on ConnectX, one size on bnxt_re, none on rxe (which
// perftest does not recognise), none for read and atomics anywhere.
func TestInlineDefault(t *testing.T) {
	for _, tc := range []struct {
		family spec.Family
		inline int
		want   map[string]int
	}{
		{spec.FamilyDefault, InlineDefault, map[string]int{"write": 220, "send": 236, "send-ud": 188, "write-imm": 220, "read": 0, "atomic": 0}},
		{spec.FamilyBnxt, InlineDefault, map[string]int{"write": 96, "send": 96, "send-ud": 96, "read": 0}},
		{spec.FamilyUnknown, InlineDefault, map[string]int{"write": 0, "send": 0, "send-ud": 0}},
		{spec.FamilyDefault, 64, map[string]int{"write": 64, "send-ud": 64}},
	} {
		c := &Config{Device: "dev0", GIDIndex: 3, Iters: 100, Inline: tc.inline, InlineFamily: tc.family}
		for name, want := range tc.want {
			tl, err := ParseTools(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.inlineFor(tl[0]); got != want {
				t.Errorf("%q, -inline %d, %s: inline %d, want %d", tc.family, tc.inline, name, got, want)
			}
			args := strings.Join(perftestArgs(c, tl[0], 64, 9), " ")
			if tl[0].inline && !strings.Contains(args, fmt.Sprintf(" -I %d ", want)) {
				t.Errorf("%s: perftest args %q lack -I %d", name, args, want)
			}
		}
	}
}
