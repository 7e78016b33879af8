package publicapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/env"
)

// TestRdmalatDocShowsTheExample: the complete benchmark in rdmalat's
// package doc, which go doc prints, is Example_benchmark's, which go test
// compiles (go doc prints no examples), so the doc's code cannot rot.
func TestRdmalatDocShowsTheExample(t *testing.T) {
	if os.Getenv(env.VarVM) == "1" {
		t.Skip("skipping in the VM: reads the source tree, which only the host has")
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "rdmalat", "doc.go"))
	require.NoError(t, err)
	example, err := os.ReadFile(filepath.Join("..", "..", "rdmalat", "example_test.go"))
	require.NoError(t, err)

	// The doc's code block, "//\t" dropped from each line.
	var inDoc []string
	in := false
	for _, l := range strings.Split(string(doc), "\n") {
		code, isCode := strings.CutPrefix(l, "//\t")
		switch {
		case isCode && code == "func BenchmarkMyLibrary(b *testing.B) {":
			in = true
		case in && isCode && code == "}":
			in = false
		case in:
			inDoc = append(inDoc, strings.TrimPrefix(strings.TrimPrefix(l, "//"), "\t"))
		}
	}
	// The example's function body, one tab of indentation less.
	var inExample []string
	in = false
	for _, l := range strings.Split(string(example), "\n") {
		switch {
		case l == "\tbenchmarkMyLibrary := func(b *testing.B) {":
			in = true
		case in && l == "\t}":
			in = false
		case in:
			inExample = append(inExample, strings.TrimPrefix(l, "\t"))
		}
	}
	require.NotEmpty(t, inExample, "Example_benchmark's benchmarkMyLibrary not found")
	assert.Equal(t, inExample, inDoc, "rdmalat/doc.go's BenchmarkMyLibrary and example_test.go's benchmarkMyLibrary differ")
	assert.Contains(t, string(doc), "testenv.MustPair", "the doc names the helper that builds the pair")
}
