package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rdmabench/rdmabench/internal/vm/guest"
	"github.com/rdmabench/rdmabench/internal/vm/initramfs"
)

// A Run is what one run puts in the guest.
type Run struct {
	Prog     string   // PROGRAM: a path, or a name looked up in PATH
	Args     []string // its arguments
	Includes []string // -include paths
	Env      []string // KEY=VALUE settings for the program, applied last
	Share    bool     // -out is shared over 9p
	Insns    bool     // the instruction counter is loaded (its counts shared)
	SIW      bool     // siw0 and siw1 are there (-siw): RXEVM_SIW=1 tells the program
	NUMA2    bool     // two NUMA nodes, rxe2 on a NIC of node 1 (rxevm -numa2)
	Nonce    string   // the end-of-run marker's nonce
}

// RunArchive builds the per-run initramfs appended to the cached base: the
// program and its shared libraries, -include paths, the working directory's
// testdata, /rxevm/run.env and /rxevm/run.sh. have holds the guest paths
// already in the guest (the base, the fleet layer): their libraries win.
func RunArchive(ctx context.Context, r Run, have map[string]bool) (*initramfs.Archive, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	a := initramfs.New()
	prog, err := findProgram(r.Prog)
	if err != nil {
		return nil, err
	}
	guestProg := filepath.Join(guest.ProgDir, filepath.Base(prog))
	if err := a.HostFile(guestProg, prog); err != nil {
		return nil, fmt.Errorf("PROGRAM: %w", err)
	}
	for _, inc := range r.Includes {
		if err := addInclude(a, cwd, inc); err != nil {
			return nil, fmt.Errorf("-include %s: %w", inc, err)
		}
	}
	td := filepath.Join(cwd, "testdata")
	if fi, err := os.Stat(td); err == nil && fi.IsDir() {
		if err := a.HostTree(td, td, nil); err != nil {
			return nil, fmt.Errorf("testdata: %w", err)
		}
	}
	a.Dir(cwd, 0o755)
	if err := addLibs(ctx, a, a.HostSources(), "", "", have); err != nil {
		return nil, err
	}
	// Before -env, which wins: a program can be told to ignore the
	// counter or the siw devices.
	var extra []string
	if r.Insns {
		extra = append(extra, "RXEVM_INSNS="+guest.InsnsFile)
	}
	if r.SIW {
		extra = append(extra, "RXEVM_SIW=1")
	}
	extra = append(extra, r.Env...)
	env, err := guest.Env(os.Environ(), extra)
	if err != nil {
		return nil, err
	}
	a.File(guest.RunEnvPath, 0o644, []byte(guest.RunEnv(r.Nonce, r.Share, r.Insns, r.NUMA2)))
	a.File(guest.RunShellPath, 0o755, []byte(guest.RunScript(env, cwd, append([]string{guestProg}, r.Args...))))
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
func addInclude(a *initramfs.Archive, cwd, inc string) error {
	host := inc
	if !filepath.IsAbs(host) {
		host = filepath.Join(cwd, inc)
	}
	fi, err := os.Stat(host)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return a.HostTree(host, host, nil)
	}
	return a.HostFile(host, host)
}
