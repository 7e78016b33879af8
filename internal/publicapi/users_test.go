package publicapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var usersFlag = flag.Bool("users", false, "TestExportUsers: list every public exported identifier with the packages that use it (builds the module: about a minute)")

// listed is the part of `go list -json` the users report reads.
type listed struct {
	ImportPath      string
	Name            string
	Dir             string
	Export          string
	CompiledGoFiles []string
	ForTest         string
	Module          *struct{ Path string }
}

// TestExportUsers, with -users, type-checks every package of the module
// (tests included) and prints, for each exported identifier of a public
// package, who outside that package uses it, split into public packages
// (and the root's benchmarks), internal packages and commands, and
// whether README.md or docs/ name it. An identifier only internal
// packages or commands use is a candidate for internal/ or for
// unexporting; one nobody uses, for unexporting. Without the flag it
// skips: it builds the whole module.
func TestExportUsers(t *testing.T) {
	if !*usersFlag {
		t.Skip("skipping: run with -users to print who uses each exported identifier (builds the module)")
	}
	root := filepath.Join("..", "..")
	cmd := exec.Command("go", "list", "-e", "-deps", "-test", "-export", "-compiled", "-json", "./...")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs = append(pkgs, p)
	}
	const mod = "github.com/rdmabench/rdmabench"
	exports := map[string]string{} // import path (plain variant) -> export data
	for _, p := range pkgs {
		if p.ForTest == "" && p.Export != "" {
			exports[p.ImportPath] = p.Export
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	public := func(path string) bool {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, mod), "/")
		return strings.HasPrefix(path, mod) && !strings.HasPrefix(rel, "internal") && !strings.HasPrefix(rel, "cmd")
	}
	// index: every exported object of a public package, as its users see it.
	key := map[types.Object]string{}
	order := []string{}
	for path := range exports {
		if !public(path) || path == mod {
			continue
		}
		pkg, err := imp.Import(path)
		require.NoError(t, err)
		if pkg.Name() == "main" {
			continue
		}
		short := strings.TrimPrefix(path, mod+"/")
		add := func(o types.Object, name string) {
			if _, ok := key[o]; !ok {
				key[o] = short + "." + name
				order = append(order, short+"."+name)
			}
		}
		for _, n := range pkg.Scope().Names() {
			o := pkg.Scope().Lookup(n)
			if !o.Exported() {
				continue
			}
			add(o, n)
			tn, ok := o.(*types.TypeName)
			if !ok {
				continue
			}
			if named, ok := tn.Type().(*types.Named); ok && !tn.IsAlias() {
				for m := range named.Methods() {
					if m.Exported() {
						add(m, n+"."+m.Name())
					}
				}
			}
			switch u := tn.Type().Underlying().(type) {
			case *types.Struct:
				if tn.IsAlias() {
					continue
				}
				for f := range u.Fields() {
					if f.Exported() && !f.Embedded() {
						add(f, n+"."+f.Name())
					}
				}
			case *types.Interface:
				if tn.IsAlias() {
					continue
				}
				for i := range u.NumExplicitMethods() {
					if m := u.ExplicitMethod(i); m.Exported() {
						add(m, n+"."+m.Name())
					}
				}
			}
		}
	}
	users := map[string]map[string]bool{}
	for _, p := range pkgs {
		if p.Module == nil || p.Module.Path != mod || strings.HasSuffix(p.ImportPath, ".test") || len(p.CompiledGoFiles) == 0 {
			continue
		}
		self := p.ImportPath
		if i := strings.Index(self, " "); i > 0 {
			self = self[:i]
		}
		selfShort := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSuffix(self, "_test"), mod), "/")
		who := strings.TrimPrefix(strings.TrimPrefix(self, mod), "/")
		if who == "" {
			who = "."
		}
		if p.ForTest != "" {
			who += " (test)"
		}
		var files []*ast.File
		for _, f := range p.CompiledGoFiles {
			if !filepath.IsAbs(f) {
				f = filepath.Join(p.Dir, f)
			}
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				continue
			}
			files = append(files, af)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp, Error: func(error) {}} // a test variant's extra names are missing from the plain export data: keep going
		conf.Check(self, fset, files, info)
		for _, o := range info.Uses {
			k, ok := key[o]
			if !ok {
				continue
			}
			objPkg := strings.TrimPrefix(o.Pkg().Path(), mod+"/")
			if objPkg == selfShort {
				continue
			}
			if users[k] == nil {
				users[k] = map[string]bool{}
			}
			users[k][who] = true
		}
	}
	// The walk is broken if it misses the use README's own example makes.
	require.NotEmpty(t, order, "no public exported identifier found")
	require.Contains(t, users["rdmalat.Measure"], ". (test)", "the root package's benchmarks call rdmalat.Measure: the type check lost them")
	docs := readDocs(t, root)
	slices.Sort(order)
	for _, k := range order {
		var pub, intl, cmds []string
		for u := range users[k] {
			switch {
			case strings.HasPrefix(u, "internal/"):
				intl = append(intl, u)
			case strings.HasPrefix(u, "cmd/"):
				cmds = append(cmds, u)
			default:
				pub = append(pub, u)
			}
		}
		slices.Sort(pub)
		slices.Sort(intl)
		slices.Sort(cmds)
		name := k[strings.IndexByte(k, '.')+1:]
		last := name[strings.LastIndexByte(name, '.')+1:]
		doc := ""
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(last) + `\b`).MatchString(docs) {
			doc = " doc"
		}
		class := "UNUSED"
		switch {
		case len(pub) > 0:
			class = "public"
		case len(cmds) > 0:
			class = "cmd"
		case len(intl) > 0:
			class = "internal"
		}
		t.Logf("%-8s %-50s%s pub=%v cmd=%v int=%v", class, k, doc, pub, cmds, intl)
	}
}

// readDocs returns README.md and docs/*.md together.
func readDocs(t *testing.T, root string) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, f := range append(files, filepath.Join(root, "README.md")) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		b.Write(data)
	}
	return b.String()
}
