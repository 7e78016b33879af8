package syncio

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writeLines has 8 goroutines write 200 lines each to w, reading it (when
// read is set) as they go.
func writeLines(w interface{ Write([]byte) (int, error) }, read func() string) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				fmt.Fprintf(w, "goroutine %d line %03d\n", g, i)
				if read != nil && i%50 == 0 {
					_ = read()
				}
			}
		})
	}
	wg.Wait()
}

// checkLines: every line arrived whole, once.
func checkLines(t *testing.T, text string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	assert.Len(t, lines, 8*200)
	seen := map[string]bool{}
	for _, l := range lines {
		var g, i int
		_, err := fmt.Sscanf(l, "goroutine %d line %d", &g, &i)
		assert.NoError(t, err, "a torn line: %q", l)
		assert.False(t, seen[l], "twice: %q", l)
		seen[l] = true
	}
}

func TestBuffer(t *testing.T) {
	var b Buffer
	assert.Empty(t, b.String(), "the zero value is empty")
	writeLines(&b, b.String)
	checkLines(t, b.String())
}

func TestWriter(t *testing.T) {
	var out bytes.Buffer
	writeLines(NewWriter(&out), nil)
	checkLines(t, out.String())
}
