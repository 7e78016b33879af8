package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// runArchive builds the per-run initramfs appended to the cached base: the
// program and its shared libraries, -include paths, the working directory's
// testdata, /rxevm/run.env and /rxevm/run.sh.
func runArchive(ctx context.Context, c *config, base *guestBase, nonce string) (*archive, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	a := newArchive()
	prog, err := findProgram(c.prog)
	if err != nil {
		return nil, err
	}
	guestProg := filepath.Join(guestProgDir, filepath.Base(prog))
	if err := a.hostFile(guestProg, prog); err != nil {
		return nil, fmt.Errorf("PROGRAM: %w", err)
	}
	for _, inc := range c.includes {
		if err := addInclude(a, cwd, inc); err != nil {
			return nil, fmt.Errorf("-include %s: %w", inc, err)
		}
	}
	td := filepath.Join(cwd, "testdata")
	if fi, err := os.Stat(td); err == nil && fi.IsDir() {
		if err := a.hostTree(td, td, nil); err != nil {
			return nil, fmt.Errorf("testdata: %w", err)
		}
	}
	a.dir(cwd, 0o755)
	if err := addRunLibs(ctx, a, base); err != nil {
		return nil, err
	}
	env, err := guestEnv(os.Environ(), append(slices.Clone(c.hostEnv), c.env...))
	if err != nil {
		return nil, err
	}
	a.file(guestRunEnv, 0o644, []byte(runEnv(nonce, c.outDir != "")))
	a.file(guestRunShell, 0o755, []byte(runScript(env, cwd, append([]string{guestProg}, c.args...))))
	return a, nil
}

// findProgram returns the absolute host path of PROGRAM, looking it up in
// PATH when it has no slash.
func findProgram(p string) (string, error) {
	if !strings.Contains(p, "/") {
		lp, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("PROGRAM %s: %w", p, err)
		}
		p = lp
	}
	return filepath.Abs(p)
}

// addInclude adds the host path inc: a relative path at the same place under
// the working directory, an absolute one at the same absolute path.
func addInclude(a *archive, cwd, inc string) error {
	host := inc
	if !filepath.IsAbs(host) {
		host = filepath.Join(cwd, inc)
	}
	fi, err := os.Stat(host)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return a.hostTree(host, host, nil)
	}
	return a.hostFile(host, host)
}

// addRunLibs adds the shared libraries the run's ELF files need, except
// those the base already has (the Debian packages' versions win).
func addRunLibs(ctx context.Context, a *archive, base *guestBase) error {
	var files []string
	for _, p := range a.paths() {
		if e := a.entries[p]; e.src != "" {
			files = append(files, e.src)
		}
	}
	r, err := ldd(ctx, "", files)
	if err != nil {
		return err
	}
	for _, lib := range r.libs {
		gp := guestLibPath(lib)
		if base.files[guestPath(gp)] || a.has(gp) {
			continue
		}
		if err := a.hostFile(gp, lib.path); err != nil {
			return err
		}
	}
	return nil
}
