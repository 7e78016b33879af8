package fleet

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpandHostlist(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"n1", []string{"n1"}},
		{"n[1-4,7],x", []string{"n1", "n2", "n3", "n4", "n7", "x"}},
		{"a,b", []string{"a", "b"}},
		{"node[08-11]", []string{"node08", "node09", "node10", "node11"}},
		{"r[1-2]n[3,5]", []string{"r1n3", "r1n5", "r2n3", "r2n5"}},
		{"n[3]", []string{"n3"}},
		{"gpu[1-2]-ib", []string{"gpu1-ib", "gpu2-ib"}},
		{"c1.example.org,c[2-3].example.org", []string{"c1.example.org", "c2.example.org", "c3.example.org"}},
		{"n[1-2],m[10-11]", []string{"n1", "n2", "m10", "m11"}},
	} {
		got, err := ExpandHostlist(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestExpandHostlistErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty host list"},
		{"n[1-4", "'[' not closed"},
		{"n1-4]", "']' without '['"},
		{"n[[1]]", "nested '['"},
		{"n[4-1]", `range "4-1" runs backwards`},
		{"n[a-b]", `"a-b" is not a number`},
		{"n[]", "empty brackets"},
		{"n1,,n2", "empty name between commas"},
		{"n[1-100000000]", "more than 65536 hosts"},
		{"n[1-300]m[1-300]", "more than 65536 hosts"},
	} {
		_, err := ExpandHostlist(tc.in)
		require.Error(t, err, tc.in)
		assert.Contains(t, err.Error(), tc.want, tc.in)
	}
}
