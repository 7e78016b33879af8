package publicapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/env"
)

// TestNoInternalTypes parses every public package's non-test files and
// fails for an exported function, method, struct field, interface method
// or typed variable whose type names an internal package or
// unsafe.Pointer. A public alias of an internal type (type Op = spec.Op)
// is how such a type is published, and is allowed; so are values.
func TestNoInternalTypes(t *testing.T) {
	if os.Getenv(env.VarVM) == "1" {
		t.Skip("skipping in the VM: reads the source tree, which only the host has")
	}
	var found []string
	files, err := walkPublic(filepath.Join("..", ".."), func(rel string, f *ast.File) {
		for _, where := range leaks(f) {
			found = append(found, rel+": "+where)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("public API names a type users cannot: %s", f)
	}
	if files == 0 {
		t.Fatal("no public package found: the walk is broken")
	}
	t.Run("size", testPublicAPISize)
}

// walkPublic parses every non-test file of the module at root's public
// packages (outside internal/, cmd/ and docs/; not package main) and
// calls fn with its path relative to root; it returns how many it read.
func walkPublic(root string, fn func(rel string, f *ast.File)) (files int, err error) {
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if rel == "internal" || rel == "cmd" || rel == "docs" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		files++
		fn(rel, f)
		return nil
	})
	return files, err
}

// leaks lists the exported declarations of f whose types name an internal
// package or unsafe.Pointer.
func leaks(f *ast.File) []string {
	banned := map[string]bool{} // import names of internal packages, and unsafe
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if strings.Contains(path, "/internal/") || path == "unsafe" {
			banned[name] = true
		}
	}
	var out []string
	check := func(what string, n ast.Node) {
		if n == nil {
			return
		}
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && banned[x.Name] {
					out = append(out, what+" names "+x.Name+"."+sel.Sel.Name)
				}
			}
			return true
		})
	}
	exportedRecv := func(fd *ast.FuncDecl) bool {
		if fd.Recv == nil {
			return true
		}
		t := fd.Recv.List[0].Type
		if s, ok := t.(*ast.StarExpr); ok {
			t = s.X
		}
		id, ok := t.(*ast.Ident)
		return !ok || id.IsExported()
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && exportedRecv(d) {
				check("func "+d.Name.Name, d.Type)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() || s.Assign.IsValid() {
						continue
					}
					switch tt := s.Type.(type) {
					case *ast.StructType:
						for _, fld := range tt.Fields.List {
							for _, n := range fld.Names {
								if n.IsExported() {
									check("field "+s.Name.Name+"."+n.Name, fld.Type)
								}
							}
						}
					case *ast.InterfaceType:
						for _, m := range tt.Methods.List {
							for _, n := range m.Names {
								if n.IsExported() {
									check("method "+s.Name.Name+"."+n.Name, m.Type)
								}
							}
						}
					default:
						check("type "+s.Name.Name, s.Type)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							check(d.Tok.String()+" "+n.Name, s.Type)
						}
					}
				}
			}
		}
	}
	return out
}

// The check finds what it is for: an exported signature, field and
// variable type naming an internal package or unsafe.Pointer, and not an
// alias, a value or an unexported name.
func TestLeaks(t *testing.T) {
	src := `package p
import (
	"unsafe"
	"example.com/m/internal/oob"
	spec2 "example.com/m/internal/spec"
)
type Op = spec2.Op
const OpWrite Op = spec2.Write
var ErrX = oob.ErrAddr
func Wire() oob.Endpoint { return oob.Endpoint{} }
func (T) CPointer() unsafe.Pointer { return nil }
func (t) hidden() oob.Endpoint { return oob.Endpoint{} }
func private() oob.Endpoint { return oob.Endpoint{} }
type T struct { Params spec2.Params; conn *oob.Conn }
type t struct{ C *oob.Conn }
var Limits oob.Limits
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(leaks(f), "; ")
	want := "func Wire names oob.Endpoint; func CPointer names unsafe.Pointer; field T.Params names spec2.Params; var Limits names oob.Limits"
	if got != want {
		t.Errorf("leaks:\n got %s\nwant %s", got, want)
	}
}
