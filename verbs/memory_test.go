package verbs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMeminfo(t *testing.T) {
	h := parseMeminfo([]byte("MemTotal:       2015252 kB\nHugePages_Total:      16\nHugePages_Free:       12\nHugepagesize:       2048 kB\n"))
	assert.Equal(t, HugePages{Size: 2 << 20, Total: 16, Free: 12}, h)
	assert.Equal(t, HugePages{}, parseMeminfo([]byte("MemTotal: 1 kB\n")), "no hugetlbfs")
}

func TestPageIsHuge(t *testing.T) {
	smaps := []byte(`7f0000000000-7f0000200000 rw-p 00000000 00:10 123   /anon_hugepage (deleted)
Size:               2048 kB
KernelPageSize:     2048 kB
MMUPageSize:        2048 kB
7f0000400000-7f0000401000 rw-p 00000000 00:00 0
Size:                  4 kB
KernelPageSize:        4 kB
`)
	huge, err := pageIsHuge(smaps, 0x7f0000100000)
	require.NoError(t, err)
	assert.True(t, huge)
	huge, err = pageIsHuge(smaps, 0x7f0000400010)
	require.NoError(t, err)
	assert.False(t, huge)
	_, err = pageIsHuge(smaps, 0x7f0000300000)
	assert.ErrorContains(t, err, "no mapping holds 0x7f0000300000")
}

func TestODPOpsString(t *testing.T) {
	assert.Equal(t, "Send|Recv|Write", (ODPSend | ODPRecv | ODPWrite).String())
	assert.Equal(t, "LocalWrite|OnDemand", (AccessLocalWrite | AccessOnDemand).String())
}
