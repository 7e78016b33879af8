package env

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rdmabench/rdmabench/internal/envtest"
)

// A number as typed and a field's value convert both ways, and the zero
// field is the default, never GID 0.
func TestGIDSetting(t *testing.T) {
	for _, tc := range []struct{ typed, setting, index int }{
		{-1, GIDBest, GIDBest},
		{0, GIDIndex0, 0},
		{1, 1, 1},
		{3, 3, 3},
	} {
		assert.Equal(t, tc.setting, GIDSetting(tc.typed), "GIDSetting(%d)", tc.typed)
		assert.Equal(t, tc.index, GIDIndexOf(tc.setting), "GIDIndexOf(%d)", tc.setting)
	}
	assert.Equal(t, GIDBest, GIDIndexOf(0), "a zero field is the best GID, not index 0")
}

// RDMABENCH_GID_INDEX=0 is index 0, which the field says with GIDIndex0.
func TestLoadGIDIndexZero(t *testing.T) {
	c, err := LoadFrom(envtest.Getenv(VarGIDIndex, "0"))
	if assert.NoError(t, err) {
		assert.Equal(t, GIDIndex0, c.GIDIndex)
		assert.Equal(t, 0, GIDIndexOf(c.GIDIndex))
	}
}
