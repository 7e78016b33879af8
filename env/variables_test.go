package env

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the generated table of docs/variables.md from Variables")

const docPath = "../docs/variables.md"

// docMarker separates the hand-written part of docs/variables.md from the
// table generated from variables.
const docMarker = "<!-- Generated from the variables table in env/names.go: edit it, then run go test ./env -update. -->\n"

// variablesTable is the reference table, one row per variable.
func variablesTable() string {
	var b strings.Builder
	b.WriteString("| Variable | Default | What it does |\n|---|---|---|\n")
	for _, v := range variables {
		b.WriteString("| `" + v.Name + "` | " + v.Default + " | " + v.Doc + " |\n")
	}
	return b.String()
}

// TestVariablesDoc fails when docs/variables.md's table is not the one
// variables gives (a variable added, dropped or reworded in one place
// only).
func TestVariablesDoc(t *testing.T) {
	skipInVM(t)
	text, err := os.ReadFile(docPath)
	require.NoError(t, err)
	head, _, ok := strings.Cut(string(text), docMarker)
	require.True(t, ok, "%s lacks the line %q", docPath, docMarker)
	want := head + docMarker + variablesTable()
	if *update {
		require.NoError(t, os.WriteFile(docPath, []byte(want), 0o644))
		return
	}
	assert.Equal(t, want, string(text), "%s is out of date: run go test ./env -update", docPath)
	for _, name := range regexp.MustCompile(`RDMABENCH_[A-Z0-9_]+`).FindAllString(head, -1) {
		assert.True(t, known(name), "%s mentions %s, which env does not define", docPath, name)
	}
}

// TestVariablesComplete fails when a file of the module names an
// RDMABENCH_ variable that variables does not list, so none can be added
// outside this package unnoticed; and when variables lists one twice.
func TestVariablesComplete(t *testing.T) {
	skipInVM(t)
	var names []string
	for _, v := range variables {
		assert.NotContains(t, names, v.Name, "listed twice")
		names = append(names, v.Name)
		assert.NotEmpty(t, v.Doc, v.Name)
		assert.NotEmpty(t, v.Default, v.Name)
	}
	re := regexp.MustCompile(`RDMABENCH_[A-Z0-9_]*[A-Z0-9]`)
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != ".." && (strings.HasPrefix(n, ".") || n == "bin" || n == "out" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".sh", ".sbatch", "": // C header guards are not variables
		default:
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(text, 0) >= 0 {
			return nil // a binary built here, such as go build ./cmd/rdmapeer leaves
		}
		for _, name := range re.FindAllString(string(text), -1) {
			if !known(name) {
				t.Errorf("%s names %s, which env/names.go's variables table does not list", path, name)
			}
		}
		return nil
	})
	require.NoError(t, err)
}

func known(name string) bool {
	return slices.ContainsFunc(variables, func(v variable) bool { return v.Name == name })
}

// skipInVM skips a test that reads the source tree, which the VM lacks
// (go test -exec bin/rxevm takes the test binary only); the host runs it.
func skipInVM(t *testing.T) {
	if os.Getenv(VarVM) == "1" {
		t.Skip("skipping in the VM: reads the source tree, which only the host has")
	}
}
