package verbs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSmapsAnonHugePages(t *testing.T) {
	smaps := []byte(`7f0000000000-7f0000400000 rw-p 00000000 00:00 0
Size:               4096 kB
KernelPageSize:        4 kB
AnonHugePages:      2048 kB
7f0000400000-7f0000401000 rw-p 00000000 00:00 0
Size:                  4 kB
AnonHugePages:         0 kB
`)
	kb, err := smapsField(smaps, 0x7f0000200000, "AnonHugePages:")
	require.NoError(t, err)
	assert.Equal(t, 2048, kb, "THP shows in AnonHugePages while KernelPageSize stays 4 kB")
	kb, err = smapsField(smaps, 0x7f0000400000, "AnonHugePages:")
	require.NoError(t, err)
	assert.Zero(t, kb)
	_, err = smapsField(smaps, 0x7f0000500000, "AnonHugePages:")
	assert.ErrorContains(t, err, "no mapping holds 0x7f0000500000")
}

func TestTHPOff(t *testing.T) {
	assert.True(t, thpOff("always madvise [never]\n"))
	assert.False(t, thpOff("always [madvise] never\n"))
	assert.False(t, thpOff("[always] madvise never\n"))
}
