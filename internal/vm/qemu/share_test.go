package qemu

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/vm/guest"
)

// No 9p share lets QEMU create what the guest asks for with QEMU's own
// credentials (security_model=none or passthrough).
func TestSharesAreMapped(t *testing.T) {
	for _, v := range []*VM{
		{Accel: "tcg", OutDir: "/o"},
		{Accel: "tcg", OutDir: "/o", OutModel: "mapped-file", CtlDir: "/c", Name: "node1"},
	} {
		args := v.Args()
		if slices.Contains(args, "-virtfs") {
			t.Errorf("-virtfs drops fmode and dmode: %q", args)
		}
		n := 0
		for i, a := range args {
			if a != "-fsdev" {
				continue
			}
			n++
			opt := args[i+1]
			if !strings.Contains(opt, "security_model=mapped-") || !strings.Contains(opt, "fmode=0644") ||
				!strings.Contains(opt, "dmode=0755") {
				t.Errorf("-fsdev %s: want a mapped security model with fmode=0644,dmode=0755", opt)
			}
			if strings.Contains(opt, "id="+guest.CtlTag) != strings.Contains(opt, "readonly=on") {
				t.Errorf("-fsdev %s: the control share alone is read-only", opt)
			}
		}
		if want := 1 + btoi(v.CtlDir != ""); n != want {
			t.Errorf("%d -fsdev in %q, want %d", n, args, want)
		}
	}
	args := (&VM{OutDir: "/o", OutModel: "mapped-file"}).Args()
	for _, want := range []string{
		"local,id=rxevmout,path=/o,security_model=mapped-file,fmode=0644,dmode=0755",
		"virtio-9p-pci,fsdev=rxevmout,mount_tag=rxevmout",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("args lack %q: %q", want, args)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// shareModel probes with a temporary file and leaves nothing behind.
func TestShareModelProbe(t *testing.T) {
	dir := t.TempDir()
	m := ShareModel(dir)
	if m != "mapped-xattr" && m != "mapped-file" {
		t.Errorf("shareModel = %q", m)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("shareModel left %v", ents)
	}
	if m := ShareModel(dir + "/missing"); m != "mapped-file" {
		t.Errorf("shareModel of a missing directory = %q, want mapped-file", m)
	}
	if m := ShareModel(""); m != "" {
		t.Errorf("shareModel without -out = %q", m)
	}
}
