// Package insns builds and loads rxevm's instruction counter: a QEMU TCG
// plugin (plugin/*.c and insns.h, embedded) that counts the guest instructions of
// the measured loops, user and kernel, between marker instructions the
// loops execute (internal/loops, internal/work). rxevm -insns builds it
// with the host's C compiler, keeps the result in its cache under a hash of
// the sources and the compiler, and loads it into QEMU; the guest reads the
// counts back from a file in a read-only 9p share (GuestFile).
package insns

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// pluginSource holds the plugin's files (plugin/*.c, plugin/insns.h),
// preloadSource the preload library's.
//
//go:embed plugin
var pluginSource embed.FS

//go:embed preload
var preloadSource embed.FS

// PreloadFile is the LD_PRELOAD library (preload/preload.c) rxevm puts
// beside the counts in the shared directory: a program without markers
// (perftest) steers the counter through it (internal/work.PreloadPath).
const PreloadFile = "preload.so"

// CountsFile is the file the plugin writes in the shared directory (the
// guest reads it as guest.InsnsFile).
const CountsFile = "counts"

// ProfileFile is the file the plugin writes its counts per guest address
// to, beside CountsFile (internal/work attributes them to functions).
const ProfileFile = "profile"

// CC is the C compiler Build runs: $CC, else cc.
func CC() string {
	if cc := os.Getenv("CC"); cc != "" {
		return cc
	}
	return "cc"
}

// Build returns the path of the plugin built from the embedded sources,
// compiling it into dir (rxevm's cache, debcache.PluginDir) unless a build
// of the same sources with the same compiler is there already.
func Build(ctx context.Context, dir string, logf func(string, ...any)) (string, error) {
	return build(ctx, dir, "insns", pluginSource, "plugin", logf)
}

// BuildPreload returns the path of the LD_PRELOAD library built from the
// embedded preload/preload.c, as Build builds the plugin. The guest is
// Debian bookworm, as rxevm's host must be: the host's cc builds for it.
func BuildPreload(ctx context.Context, dir string, logf func(string, ...any)) (string, error) {
	return build(ctx, dir, "preload", preloadSource, "preload", logf)
}

// sourceFile is one file of a build: its name and contents.
type sourceFile struct {
	name string
	data []byte
}

// readSources returns the files of folder src in fsys, by name.
func readSources(fsys fs.FS, src string) ([]sourceFile, error) {
	ents, err := fs.ReadDir(fsys, src) // sorted by name: the hash is stable
	if err != nil {
		return nil, err
	}
	var files []sourceFile
	for _, e := range ents {
		data, err := fs.ReadFile(fsys, src+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		files = append(files, sourceFile{e.Name(), data})
	}
	return files, nil
}

// build compiles the C files of folder src in fsys (with the headers beside
// them) into dir/NAME-HASH.so unless it is there; the hash covers every
// file's name and contents, the compiler and its flags.
func build(ctx context.Context, dir, name string, fsys fs.FS, src string, logf func(string, ...any)) (string, error) {
	files, err := readSources(fsys, src)
	if err != nil {
		return "", err
	}
	cc, err := exec.LookPath(CC())
	if err != nil {
		return "", fmt.Errorf("-insns builds a QEMU plugin with a C compiler, and %s is not found: apt-get install gcc (or set CC)", CC())
	}
	version, err := exec.CommandContext(ctx, cc, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", cc, err)
	}
	args := []string{"-O2", "-Wall", "-shared", "-fPIC"}
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s %d\n", f.name, len(f.data))
		h.Write(f.data)
	}
	h.Write([]byte(cc))
	h.Write(version)
	fmt.Fprint(h, args)
	so := filepath.Join(dir, name+"-"+hex.EncodeToString(h.Sum(nil))[:16]+".so")
	if _, err := os.Stat(so); err == nil {
		return so, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	var cfiles []string
	for _, f := range files {
		path := filepath.Join(tmp, f.name)
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			return "", err
		}
		if strings.HasSuffix(f.name, ".c") {
			cfiles = append(cfiles, path)
		}
	}
	out := filepath.Join(tmp, name+".so")
	cmd := exec.CommandContext(ctx, cc, append(append(args, "-o", out), cfiles...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the instruction counter's %s (%s %s): %w: %s", name, cc, strings.Join(cfiles, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	if err := os.Rename(out, so); err != nil {
		return "", err
	}
	logf("built the instruction counter's %s %s", name, so)
	return so, nil
}

// QemuArgs returns the arguments that load plugin so, writing its counts
// into hostDir/CountsFile and its profile into hostDir/ProfileFile.
func QemuArgs(so, hostDir string) []string {
	esc := func(s string) string { return strings.ReplaceAll(s, ",", ",,") } // QEMU's option syntax
	return []string{"-plugin", esc(so) + ",out=" + esc(filepath.Join(hostDir, CountsFile)) +
		",profile=" + esc(filepath.Join(hostDir, ProfileFile))}
}
