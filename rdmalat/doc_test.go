package rdmalat_test

import (
	"embed"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sources are read at build time, so the test runs in the VM too, where
// the source tree is not.
//
//go:embed doc.go example_test.go
var sources embed.FS

// TestRdmalatDocShowsTheExample: the complete benchmark in rdmalat's
// package doc, which go doc prints, is Example_benchmark's, which go test
// compiles (go doc prints no examples), so the doc's code cannot rot.
func TestRdmalatDocShowsTheExample(t *testing.T) {
	doc, err := sources.ReadFile("doc.go")
	require.NoError(t, err)
	example, err := sources.ReadFile("example_test.go")
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
