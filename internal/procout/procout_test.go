package procout

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTail(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 9; i++ {
		b.WriteString("line " + string(rune('0'+i)) + "\n")
	}
	out := []byte(b.String() + "\n\n")
	assert.Equal(t, "; output ends: line 7 | line 8 | line 9", OneLine(out, 3))
	assert.Equal(t, "; output ends:\n\tline 8\n\tline 9", Indented(out, 2))
	assert.Equal(t, "; output ends: only", OneLine([]byte("only"), 6), "fewer lines than asked")
	for _, empty := range [][]byte{nil, []byte("\n\n")} {
		assert.Empty(t, OneLine(empty, 6))
		assert.Empty(t, Indented(empty, 6))
	}
}
