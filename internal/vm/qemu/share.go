package qemu

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The 9p shares never use security_model=none or passthrough: with those,
// QEMU creates what the guest asks for with QEMU's own credentials, so a
// guest running code of any commit (rdmaab builds arbitrary revisions) could
// leave a setuid-root binary or a device node in -out when rxevm runs as
// root. In the mapped models the guest's owners, modes, device nodes and
// symlinks live in metadata only: on the host every file is a plain file
// with fmode and every directory has dmode, owned by whoever runs rxevm.
const (
	shareFileMode = "0644" // what the tools reading -out expect
	shareDirMode  = "0755"
)

// ShareModel returns the 9p security model for dir: mapped-xattr (metadata
// in user.virtfs.* extended attributes) where dir's file system takes user
// extended attributes, else mapped-file (metadata in .virtfs_metadata
// directories beside the files: tmpfs before Linux 6.6, some NFS).
func ShareModel(dir string) string {
	if dir == "" {
		return ""
	}
	f, err := os.CreateTemp(dir, ".rxevm-xattr-probe")
	if err != nil {
		return "mapped-file"
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := unix.Fsetxattr(int(f.Fd()), "user.rxevm.probe", []byte("1"), 0); err != nil {
		return "mapped-file"
	}
	return "mapped-xattr"
}

// shareArgs are the QEMU arguments sharing dir under tag with model (empty:
// mapped-xattr): -fsdev and -device rather than -virtfs, which in QEMU 7.2
// drops fmode and dmode (files came out 0600).
func shareArgs(dir, tag, model string, readonly bool) []string {
	if model == "" {
		model = "mapped-xattr"
	}
	opts := []string{"local", "id=" + tag, "path=" + dir, "security_model=" + model,
		"fmode=" + shareFileMode, "dmode=" + shareDirMode}
	if readonly {
		opts = append(opts, "readonly=on")
	}
	return []string{"-fsdev", strings.Join(opts, ","),
		"-device", "virtio-9p-pci,fsdev=" + tag + ",mount_tag=" + tag}
}
