package image

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/vm/debcache"
)

// TestSourcePackages: the four packages of an out-of-tree build, at the
// kernel package's version, the architecture-independent ones as such
// (their .deb names end in _all).
func TestSourcePackages(t *testing.T) {
	got, err := sourcePackages(debcache.Package{Name: "linux-image-6.1.0-57-amd64", Version: "6.1.192-3"})
	if err != nil {
		t.Fatal(err)
	}
	want := []debcache.Package{
		{Name: "linux-source-6.1", Version: "6.1.192-3", Arch: "all"},
		{Name: "linux-headers-6.1.0-57-amd64", Version: "6.1.192-3"},
		{Name: "linux-headers-6.1.0-57-common", Version: "6.1.192-3", Arch: "all"},
		{Name: "linux-kbuild-6.1", Version: "6.1.192-3"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if f := debcache.DebFile(got[0]); f != "linux-source-6.1_6.1.192-3_all.deb" {
		t.Errorf("DebFile = %q", f)
	}
	for _, k := range []debcache.Package{
		{Name: "linux-image-6.1.0-57-arm64", Version: "6.1.192-3"},
		{Name: "linux-image-amd64", Version: "6.1.192-3"},
		{Name: "linux-image-6.1.0-57-amd64", Version: "6"},
	} {
		if _, err := sourcePackages(k); err == nil || !strings.Contains(err.Error(), "want linux-image-X.Y.Z-N-amd64") {
			t.Errorf("%v: err = %v, want the expected form", k, err)
		}
	}
}

// TestKernelDebOf: the kernel package is the .deb whose modules the base
// holds; its version comes from the file name (epoch unescaped).
func TestKernelDebOf(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "debs"), 0o755)
	for _, f := range []string{"linux-image-6.1.0-56-amd64_6.1.190-1_amd64.deb", "linux-image-6.1.0-57-amd64_1%3a6.1.192-3_amd64.deb"} {
		os.WriteFile(filepath.Join(dir, "debs", f), nil, 0o644)
	}
	base := &Base{Dir: filepath.Join(dir, "key"), Files: map[string]bool{"usr/lib/modules/6.1.0-57-amd64": true}}
	path, p, err := kernelDebOf(dir, base)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "linux-image-6.1.0-57-amd64_1%3a6.1.192-3_amd64.deb" || p != (debcache.Package{Name: "linux-image-6.1.0-57-amd64", Version: "1:6.1.192-3"}) {
		t.Errorf("got %s %v", path, p)
	}
	base.Files = map[string]bool{"usr/lib/modules/6.1.0-99-amd64": true}
	if _, _, err := kernelDebOf(dir, base); err == nil || !strings.Contains(err.Error(), "remove "+base.Dir+" to rebuild it") {
		t.Errorf("err = %v, want what to remove", err)
	}
}

// TestAddLoop: the loop goes first into the named function's body, not
// into a function whose name it prefixes or a declaration.
func TestAddLoop(t *testing.T) {
	f := filepath.Join(t.TempDir(), "rxe_recv.c")
	src := "void rxe_rcv_mcast(struct sk_buff *skb)\n{\n\tint a;\n}\n\nvoid rxe_rcv(struct sk_buff *skb);\n\nvoid rxe_rcv(struct sk_buff *skb)\n{\n\tint err;\n}\n"
	os.WriteFile(f, []byte(src), 0o644)
	if err := addLoop(f, "rxe_rcv", 1000); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f)
	want := "void rxe_rcv(struct sk_buff *skb)\n{\n\t{ /* rxevm -rxe-extra-cost */\n\t\tunsigned long rxevm_i;\n\n\t\tfor (rxevm_i = 0; rxevm_i < 1000UL; rxevm_i++)\n\t\t\tbarrier();\n\t}\n\tint err;\n}\n"
	if !strings.HasSuffix(string(b), want) || strings.Count(string(b), "rxevm_i <") != 1 {
		t.Errorf("got\n%s", b)
	}
	if err := addLoop(f, "rxe_nothere", 1); err == nil || !strings.Contains(err.Error(), "no definition of rxe_nothere") {
		t.Errorf("err = %v", err)
	}
}
