//go:build !cgo || !linux

package loops

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStubSaysWhy(t *testing.T) {
	_, err := New(Config{})
	assert.ErrorContains(t, err, "need cgo and libibverbs")
}
