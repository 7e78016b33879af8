// Package abbuild makes the two test binaries an A/B comparison runs
// (cmd/rdmaab): from a git revision, checked out in a temporary worktree
// that is removed afterwards (and swept at the next start if a killed run
// left it), from a working tree, or a given binary as it is.
package abbuild

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/internal/childproc"
	"github.com/rdmabench/rdmabench/internal/cmdout"
)

// A Built is one side's test binary and what it was made from.
type Built struct {
	Bin  string
	Desc string // "commit main (3f2a1c9...)", "working tree /src/x", "binary ./old.test"
	Dir  string // the package directory it was built in; "" for a given binary
}

// A Builder makes test binaries in a temporary directory and removes every
// git worktree it added, whatever happens, when closed.
type Builder struct {
	tmp       string
	owner     *os.File // tmp's owner marker, flocked while this builder lives
	pkg       string   // package directory, relative, as given to -pkg
	log       io.Writer
	worktrees []worktree
}

type worktree struct{ repo, path string }

// NewBuilder first sweeps what killed rdmaab runs left behind,
// then makes its own temporary directory, marked as rdmaab's.
func NewBuilder(pkg string, log io.Writer) (*Builder, error) {
	sweepStale(os.TempDir(), log)
	tmp, err := os.MkdirTemp("", tmpPrefix)
	if err != nil {
		return nil, err
	}
	owner, err := claimTmp(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &Builder{tmp: tmp, owner: owner, pkg: pkg, log: log}, nil
}

// Close removes the worktrees and the temporary directory. It uses no
// context: it must run after a signal has cancelled everything else.
func (b *Builder) Close() {
	for _, wt := range b.worktrees {
		cmd := exec.Command("git", "-C", wt.repo, "worktree", "remove", "--force", wt.path)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(b.log, "rdmaab: removing worktree %s: %v: %s\n", wt.path, err, bytes.TrimSpace(out))
		}
		exec.Command("git", "-C", wt.repo, "worktree", "prune").Run()
	}
	b.worktrees = nil
	os.RemoveAll(b.tmp)
	if b.owner != nil {
		b.owner.Close()
		b.owner = nil
	}
}

// Side resolves OLD or NEW: an executable file is used as it is, a
// directory is a working tree whose -pkg is built, anything else is a git
// revision of the repository around the current directory, checked out in
// a temporary worktree and built at the same place inside it. A name that
// is both a path and a revision (a directory ./peer and a branch peer) is
// refused: the user writes which one they mean.
func (b *Builder) Side(ctx context.Context, name, arg string) (Built, error) {
	if err := ambiguous(ctx, name, arg); err != nil {
		return Built{}, err
	}
	if fi, err := os.Stat(arg); err == nil {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return Built{}, err
		}
		if !fi.IsDir() {
			if fi.Mode()&0o111 == 0 {
				return Built{}, fmt.Errorf("%s %s: a file but not executable: give a test binary (go test -c), a directory or a git revision", name, arg)
			}
			return Built{Bin: abs, Desc: "binary " + arg}, nil
		}
		pkgDir := filepath.Join(abs, b.pkg)
		bin, err := b.build(ctx, name, pkgDir)
		return Built{Bin: bin, Desc: "working tree " + arg, Dir: pkgDir}, err
	}
	top, err := gitOut(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return Built{}, fmt.Errorf("%s %q is no file, no directory, and there is no git repository here to find it in as a revision: %w", name, arg, err)
	}
	prefix, err := gitOut(ctx, "", "rev-parse", "--show-prefix")
	if err != nil {
		return Built{}, err
	}
	hash, err := gitOut(ctx, "", "rev-parse", "--verify", "--quiet", arg+"^{commit}")
	if err != nil {
		return Built{}, fmt.Errorf("%s %q is no file, no directory and no git revision (try a branch, a tag, HEAD~1 or a commit hash)", name, arg)
	}
	wt := filepath.Join(b.tmp, name+"-tree")
	if err := b.recordRepo(top); err != nil {
		return Built{}, err
	}
	if _, err := gitOut(ctx, top, "worktree", "add", "--detach", "--quiet", wt, hash); err != nil {
		return Built{}, fmt.Errorf("%s %s: %w", name, arg, err)
	}
	b.worktrees = append(b.worktrees, worktree{top, wt})
	pkgDir := filepath.Join(wt, prefix, b.pkg)
	bin, err := b.build(ctx, name, pkgDir)
	short := hash
	if len(short) > 12 {
		short = short[:12]
	}
	return Built{Bin: bin, Desc: fmt.Sprintf("commit %s (%s)", arg, short), Dir: pkgDir}, err
}

// build runs go test -c in dir.
func (b *Builder) build(ctx context.Context, name, dir string) (string, error) {
	bin := filepath.Join(b.tmp, name+".test")
	fmt.Fprintf(b.log, "rdmaab: building the %s side: go test -c in %s\n", name, dir)
	// The go command's work directory (go-build*) goes under tmp, which the
	// sweep of a killed rdmaab removes whole: a SIGKILL gives the go
	// command no chance to remove its own.
	gotmp := filepath.Join(b.tmp, "gotmp")
	if err := os.MkdirAll(gotmp, 0o755); err != nil {
		return "", err
	}
	// -trimpath: without it every package's compile depends on the
	// directory it is in, and each side's temporary worktree is a new one,
	// so both sides recompiled the whole module (50 s a side on a loaded
	// 2-CPU host); with it the second side, and every package a change
	// leaves alone, comes from the build cache. The code is the same.
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-trimpath", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTMPDIR="+gotmp)
	// go test -c runs the compiler and linker as children: on cancel the
	// whole process group goes, not just the go command.
	childproc.TieGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building the %s side in %s: %w%s", name, dir, err, cmdout.Tail(out, tailLines))
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("building the %s side in %s: go test -c wrote no binary: the package has no test files", name, dir)
	}
	return bin, nil
}

// ambiguous refuses an argument that names an existing path and also
// resolves as a git revision, unless written as a path (./x, ../x, /x).
func ambiguous(ctx context.Context, name, arg string) error {
	if _, err := os.Stat(arg); err != nil || arg == "." || arg == ".." ||
		strings.HasPrefix(arg, "./") || strings.HasPrefix(arg, "../") || filepath.IsAbs(arg) {
		return nil
	}
	hash, err := gitOut(ctx, "", "rev-parse", "--verify", "--quiet", arg+"^{commit}")
	if err != nil {
		return nil // not a revision (or no git here): a path
	}
	rev, _ := gitOut(ctx, "", "rev-parse", "--symbolic-full-name", arg)
	if rev == "" {
		rev = hash
	}
	return fmt.Errorf("%s %q is both a path here and the git revision %s: write ./%s for the path, or %s for the revision",
		name, arg, rev, arg, rev)
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

// rdmaab's temporary directories are tmpPrefix* in the system's temporary
// directory, each marked by ownerFile: its first line is ownerHeader, then
// one "repo: DIR" line per repository a worktree was added to. The running
// rdmaab holds an flock on it; a marked directory whose lock is free was
// left by an rdmaab that was killed, and the next rdmaab removes it with its
// worktrees. Nothing without the marker is touched.
const (
	tmpPrefix   = "rdmaab-"
	ownerFile   = ".rdmaab-owner"
	ownerHeader = "rdmaab temporary directory: removed with its git worktrees once no rdmaab holds its lock"
)

// claimTmp writes tmp's marker and locks it. The marker is locked under a
// temporary name and then renamed, so no sweeper ever sees it unlocked.
func claimTmp(tmp string) (*os.File, error) {
	f, err := os.CreateTemp(tmp, "owner")
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	if _, err := f.WriteString(ownerHeader + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Rename(f.Name(), filepath.Join(tmp, ownerFile)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// recordRepo notes, before a worktree is added to repo, where a sweeper
// must unregister it.
func (b *Builder) recordRepo(repo string) error {
	for _, wt := range b.worktrees {
		if wt.repo == repo {
			return nil
		}
	}
	_, err := fmt.Fprintf(b.owner, "repo: %s\n", repo)
	return err
}

// sweepStale removes the temporary directories of rdmaab runs that were
// killed, with the worktrees they registered, and prunes those
// repositories' worktree lists, then the current repository's.
func sweepStale(tmpRoot string, log io.Writer) {
	dirs, _ := filepath.Glob(filepath.Join(tmpRoot, tmpPrefix+"*"))
	for _, dir := range dirs {
		repos, err := staleRepos(dir)
		if err != nil {
			continue // not rdmaab's, or still in use
		}
		for _, repo := range repos {
			for _, side := range []string{"old", "new"} {
				wt := filepath.Join(dir, side+"-tree")
				if _, err := os.Stat(wt); err == nil {
					exec.Command("git", "-C", repo, "worktree", "remove", "--force", wt).Run()
				}
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintf(log, "rdmaab: removing %s, left by a killed rdmaab: %v\n", dir, err)
			continue
		}
		for _, repo := range repos {
			exec.Command("git", "-C", repo, "worktree", "prune").Run()
		}
		fmt.Fprintf(log, "rdmaab: removed %s and its worktrees, left by an rdmaab that was killed\n", dir)
	}
	if _, err := exec.LookPath("git"); err == nil {
		exec.Command("git", "worktree", "prune").Run() // outside a repository: a harmless error
	}
}

// errInUse means a marked directory's lock is held: its rdmaab is running.
var errInUse = errors.New("in use")

// staleRepos returns the repositories recorded in dir's marker when dir is
// a marked rdmaab directory whose lock is free (keeping nothing locked:
// the directory is removed next).
func staleRepos(dir string) ([]string, error) {
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil, errInUse
	}
	sc := bufio.NewScanner(f)
	if !sc.Scan() || sc.Text() != ownerHeader {
		return nil, errors.New("not an rdmaab marker")
	}
	var repos []string
	for sc.Scan() {
		if r, ok := strings.CutPrefix(sc.Text(), "repo: "); ok && filepath.IsAbs(r) {
			repos = append(repos, r)
		}
	}
	return repos, nil
}

// tailLines is how much of a failed build's output an error quotes.
const tailLines = 10
