package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A built side is one side's test binary and what it was made from.
type builtSide struct {
	bin  string
	desc string // "commit main (3f2a1c9...)", "working tree /src/x", "binary ./old.test"
	dir  string // the package directory it was built in; "" for a given binary
}

// A builder makes test binaries in a temporary directory and removes every
// git worktree it added, whatever happens, when closed.
type builder struct {
	tmp       string
	pkg       string // package directory, relative, as given to -pkg
	log       io.Writer
	worktrees []worktree
}

type worktree struct{ repo, path string }

func newBuilder(pkg string, log io.Writer) (*builder, error) {
	tmp, err := os.MkdirTemp("", "rdmaab-")
	if err != nil {
		return nil, err
	}
	return &builder{tmp: tmp, pkg: pkg, log: log}, nil
}

// Close removes the worktrees and the temporary directory. It uses no
// context: it must run after a signal has cancelled everything else.
func (b *builder) Close() {
	for _, wt := range b.worktrees {
		cmd := exec.Command("git", "-C", wt.repo, "worktree", "remove", "--force", wt.path)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(b.log, "rdmaab: removing worktree %s: %v: %s\n", wt.path, err, bytes.TrimSpace(out))
		}
		exec.Command("git", "-C", wt.repo, "worktree", "prune").Run()
	}
	b.worktrees = nil
	os.RemoveAll(b.tmp)
}

// side resolves OLD or NEW: an executable file is used as it is, a
// directory is a working tree whose -pkg is built, anything else is a git
// revision of the repository around the current directory, checked out in
// a temporary worktree and built at the same place inside it.
func (b *builder) side(ctx context.Context, name, arg string) (builtSide, error) {
	if fi, err := os.Stat(arg); err == nil {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return builtSide{}, err
		}
		if !fi.IsDir() {
			if fi.Mode()&0o111 == 0 {
				return builtSide{}, fmt.Errorf("%s %s: a file but not executable: give a test binary (go test -c), a directory or a git revision", name, arg)
			}
			return builtSide{bin: abs, desc: "binary " + arg}, nil
		}
		pkgDir := filepath.Join(abs, b.pkg)
		bin, err := b.build(ctx, name, pkgDir)
		return builtSide{bin: bin, desc: "working tree " + arg, dir: pkgDir}, err
	}
	top, err := gitOut(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return builtSide{}, fmt.Errorf("%s %q is no file, no directory, and there is no git repository here to find it in as a revision: %w", name, arg, err)
	}
	prefix, err := gitOut(ctx, "", "rev-parse", "--show-prefix")
	if err != nil {
		return builtSide{}, err
	}
	hash, err := gitOut(ctx, "", "rev-parse", "--verify", "--quiet", arg+"^{commit}")
	if err != nil {
		return builtSide{}, fmt.Errorf("%s %q is no file, no directory and no git revision (try a branch, a tag, HEAD~1 or a commit hash)", name, arg)
	}
	wt := filepath.Join(b.tmp, name+"-tree")
	if _, err := gitOut(ctx, top, "worktree", "add", "--detach", "--quiet", wt, hash); err != nil {
		return builtSide{}, fmt.Errorf("%s %s: %w", name, arg, err)
	}
	b.worktrees = append(b.worktrees, worktree{top, wt})
	pkgDir := filepath.Join(wt, prefix, b.pkg)
	bin, err := b.build(ctx, name, pkgDir)
	short := hash
	if len(short) > 12 {
		short = short[:12]
	}
	return builtSide{bin: bin, desc: fmt.Sprintf("commit %s (%s)", arg, short), dir: pkgDir}, err
}

// build runs go test -c in dir.
func (b *builder) build(ctx context.Context, name, dir string) (string, error) {
	bin := filepath.Join(b.tmp, name+".test")
	fmt.Fprintf(b.log, "rdmaab: building the %s side: go test -c in %s\n", name, dir)
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building the %s side in %s: %w%s", name, dir, err, tailOf(out))
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("building the %s side in %s: go test -c wrote no binary: the package has no test files", name, dir)
	}
	return bin, nil
}

// gitOut runs git in dir ("" for the current directory) and returns its
// trimmed standard output.
func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return strings.TrimSpace(string(out)), nil
}
