package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// baseArchive lays out the guest's base initramfs from the unpacked
// packages in root: the package files (without docs and most of the kernel),
// the modules /init loads, busybox and its applets, the host libraries the
// binaries need, a few /etc files and /init.
func baseArchive(ctx context.Context, root, kver, busybox string) (*archive, error) {
	a := newArchive()
	for _, d := range []string{"dev", "proc", "sys", "run", "root", "etc", "usr/bin", "usr/sbin", "usr/lib64", "rxevm"} {
		a.dir(d, 0o755)
	}
	a.dir("tmp", 0o1777)
	for _, d := range mergedUsr {
		a.entries[d] = &entry{mode: modeSymlink | 0o777, link: "usr/" + d}
	}
	a.charDev("dev/console", 0o600, 5, 1)
	a.charDev("dev/null", 0o666, 1, 3)

	skip := func(rel string) bool {
		switch rel {
		case "boot", "lib/modules", "usr/lib/modules", "usr/share", "etc/init.d":
			return true
		}
		return false
	}
	if err := a.hostTree("/", root, skip); err != nil {
		return nil, err
	}
	rdma, ninep, err := addModules(a, root, kver)
	if err != nil {
		return nil, err
	}
	if err := addBusybox(a, busybox); err != nil {
		return nil, err
	}
	if err := addHostLibs(ctx, a, root); err != nil {
		return nil, err
	}
	a.file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\n"))
	a.file("etc/group", 0o644, []byte("root:x:0:\n"))
	a.file("etc/hosts", 0o644, []byte("127.0.0.1\tlocalhost\n192.168.77.1\trxe0\n192.168.77.2\trxe1\n"))
	a.file("init", 0o755, []byte(initScript(rdma, ninep)))
	return a, nil
}

// addModules adds the kernel modules /init loads and returns their guest
// paths in load order: RDMA ones and the extra ones for the 9p share.
func addModules(a *archive, root, kver string) (rdma, ninep []string, err error) {
	mdir := filepath.Join(root, "lib", "modules", kver)
	dep, err := os.Open(filepath.Join(mdir, "modules.dep"))
	if err != nil {
		return nil, nil, err
	}
	defer dep.Close()
	builtin, err := os.Open(filepath.Join(mdir, "modules.builtin"))
	if err != nil {
		return nil, nil, err
	}
	defer builtin.Close()
	ix, err := parseModulesDep(dep, builtin)
	if err != nil {
		return nil, nil, err
	}
	first, err := ix.loadOrder(rdmaModules)
	if err != nil {
		return nil, nil, err
	}
	all, err := ix.loadOrder(append(append([]string{}, rdmaModules...), ninepModules...))
	if err != nil {
		return nil, nil, err
	}
	inFirst := map[string]bool{}
	for _, f := range first {
		inFirst[f] = true
	}
	guest := func(f string) string { return "/usr/lib/modules/" + kver + "/" + f }
	for _, f := range all {
		if err := a.hostFile(guest(f), filepath.Join(mdir, f)); err != nil {
			return nil, nil, err
		}
		if inFirst[f] {
			rdma = append(rdma, guest(f))
		} else {
			ninep = append(ninep, guest(f))
		}
	}
	return rdma, ninep, nil
}

// addHostLibs adds the host libraries that the ELF files in the archive need
// and the packages do not provide.
func addHostLibs(ctx context.Context, a *archive, root string) error {
	var files []string
	for _, p := range a.paths() {
		if e := a.entries[p]; e.src != "" {
			files = append(files, e.src)
		}
	}
	libPath := strings.Join([]string{
		filepath.Join(root, "usr/lib/x86_64-linux-gnu"),
		filepath.Join(root, "lib/x86_64-linux-gnu"),
	}, ":")
	r, err := ldd(ctx, libPath, files)
	if err != nil {
		return err
	}
	for _, lib := range r.libs {
		if strings.HasPrefix(lib.path, root+"/") || a.has(guestLibPath(lib)) {
			continue
		}
		if err := a.hostFile(guestLibPath(lib), lib.path); err != nil {
			return err
		}
	}
	return nil
}

// addBusybox adds busybox and a symbolic link for each of its applets that
// the packages do not provide (iproute2's ip wins over busybox's).
func addBusybox(a *archive, busybox string) error {
	if err := a.hostFile("/usr/bin/busybox", busybox); err != nil {
		return err
	}
	out, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return fmt.Errorf("busybox --list: %v", err)
	}
	s := bufio.NewScanner(bytes.NewReader(out))
	var applets []string
	for s.Scan() {
		if n := strings.TrimSpace(s.Text()); n != "" && !strings.Contains(n, "/") {
			applets = append(applets, n)
		}
	}
	sort.Strings(applets)
	for _, n := range applets {
		if !a.has("/usr/bin/"+n) && !a.has("/usr/sbin/"+n) {
			a.symlink("/usr/bin/"+n, "busybox")
		}
	}
	return nil
}
