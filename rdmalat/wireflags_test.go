package rdmalat

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rdmabench/rdmabench/internal/oob"
)

// TestWireFlagsMemory: each memory kind reaches rdmapeer as its own flag,
// so the peer backs its buffer the same way.
func TestWireFlagsMemory(t *testing.T) {
	assert.Equal(t, oob.Flags(0), wireFlags(EndpointConfig{}))
	assert.Equal(t, oob.FlagHugePages, wireFlags(EndpointConfig{HugePages: true}))
	assert.Equal(t, oob.FlagTHP, wireFlags(EndpointConfig{THP: true}))
	assert.Equal(t, oob.FlagODP|oob.FlagTHP, wireFlags(EndpointConfig{THP: true, ODP: true}))
}
