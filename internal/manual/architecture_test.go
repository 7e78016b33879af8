package manual

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/env"
)

const module = "github.com/rdmabench/rdmabench"

// imports maps each package directory of the module (relative, "." for
// the root) to the module packages its non-test files import, and says
// which import "C".
func moduleImports(t *testing.T) (imports map[string][]string, cgo map[string]bool) {
	t.Helper()
	root := filepath.Join("..", "..")
	imports, cgo = map[string][]string{}, map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "bin" || n == "out" || n == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		dir = filepath.ToSlash(dir)
		if _, ok := imports[dir]; !ok {
			imports[dir] = nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case p == "C":
				cgo[dir] = true
			case p == module:
				imports[dir] = append(imports[dir], ".")
			case strings.HasPrefix(p, module+"/"):
				imports[dir] = append(imports[dir], strings.TrimPrefix(p, module+"/"))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 10 {
		t.Fatalf("found %d packages: the walk is broken", len(imports))
	}
	return imports, cgo
}

// under says whether package pkg is prefix or inside it.
func under(pkg, prefix string) bool {
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

// toolInternals maps each tool's internal packages to the packages that
// may import them: its command, and the tool's own packages.
var toolInternals = map[string][]string{
	"internal/abrun":       {"cmd/rdmaab"},
	"internal/abbuild":     {"cmd/rdmaab", "internal/abrun"},
	"internal/perftestcmp": {"cmd/rdmacompare"},
	"internal/perftest":    {"internal/perftestcmp"},
	"internal/schedstat":   {"internal/perftestcmp"},
	"internal/peer":        {"cmd/rdmapeer"},
	"internal/vm":          {"cmd/rxevm", "internal/vm"},
	"internal/fleet":       {"cmd/rdmafleet", "internal/fleet"},
	"internal/fleettest":   {},
	"internal/envtest":     {},
	"internal/rdmalattest": {},
	"internal/texttest":    {},
	"internal/report":      {"cmd/rdmasummary"},
	"internal/summary":     {"cmd/rdmasummary", "internal/report"},
	"internal/target":      {"cmd/rdmacheck", "cmd/rdmatune"},
	"internal/tune":        {"cmd/rdmatune"},
	"internal/noise":       {"cmd/rdmanoise"},
	"internal/progress":    {"cmd/rdmaprogress"},
	"internal/manual":      {},
	"internal/publicapi":   {},
}

// TestArchitectureRules checks the rules of who may import whom that
// docs/architecture.md states.
func TestArchitectureRules(t *testing.T) {
	if os.Getenv(env.VarVM) == "1" {
		t.Skip("skipping in the VM: reads the source tree, which only the host has")
	}
	imports, cgo := moduleImports(t)
	// internal/atomicfile (write to a temporary file, then rename) is the
	// one import the pure packages may have: it is pure itself.
	for _, pure := range []string{"latency", "internal/latplot", "internal/fleet/heatmap", "internal/spec", "internal/atomicfile"} {
		if _, ok := imports[pure]; !ok {
			t.Errorf("%s: no such package; docs/architecture.md names it", pure)
		}
		other := slices.DeleteFunc(slices.Clone(imports[pure]), func(p string) bool { return p == "internal/atomicfile" })
		if len(other) > 0 || cgo[pure] {
			t.Errorf("%s imports %v (cgo %v): statistics and plots import nothing of the module but internal/atomicfile", pure, imports[pure], cgo[pure])
		}
	}
	for pkg := range cgo {
		if !slices.Contains([]string{"verbs", "internal/loops", "internal/rdmacm"}, pkg) {
			t.Errorf("%s imports \"C\": only verbs, internal/loops and internal/rdmacm may", pkg)
		}
	}
	for pkg, deps := range imports {
		public := !under(pkg, "internal") && !under(pkg, "cmd")
		for _, dep := range deps {
			if dep == "testenv" {
				t.Errorf("%s imports testenv in a non-test file: testenv is for tests", pkg)
			}
			for tool, allowed := range toolInternals {
				if !under(dep, tool) || under(pkg, tool) {
					continue
				}
				if public {
					t.Errorf("public package %s imports %s, an internal package of a tool", pkg, dep)
					continue
				}
				if !slices.ContainsFunc(allowed, func(a string) bool { return under(pkg, a) }) {
					t.Errorf("%s imports %s, which belongs to %v", pkg, dep, allowed)
				}
			}
		}
	}
}
