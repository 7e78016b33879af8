package abrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// benchstat's table wherever rdmaab runs: x/perf's cmd/benchstat is a main
// package, not a library, so rdmaab runs the one of the x/perf version it
// was built with (it links x/perf's benchfmt and benchmath already), built
// once into the user's cache by go install (from the module proxy, or
// offline from the module cache, where go install rdmaab left x/perf). A
// user's module needs nothing in its go.mod. Where that cannot be (no go
// command, x/perf replaced by a directory), the benchstat on PATH, then
// go tool benchstat of the current module.

const perfModule = "golang.org/x/perf"

// perfVersion returns the x/perf version this binary was built with, or ""
// (a variable for tests).
var perfVersion = func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path != perfModule {
			continue
		}
		if d.Replace != nil {
			if d.Replace.Version == "" {
				return "" // replaced by a directory: no version to install
			}
			return d.Replace.Version
		}
		return d.Version
	}
	return ""
}

// safeVersion reports whether v can name a directory: a module version.
func safeVersion(v string) bool {
	if !strings.HasPrefix(v, "v") || strings.Contains(v, "..") {
		return false
	}
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-' || c == '+') {
			return false
		}
	}
	return true
}

// pinnedBenchstat returns the path of benchstat at x/perf's version v,
// building it into the cache first if needed (progress says so).
func pinnedBenchstat(ctx context.Context, v string, progress io.Writer) (string, error) {
	if !safeVersion(v) {
		return "", fmt.Errorf("x/perf version %q is not a module version", v)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "rdmabench", "benchstat", v)
	bin := filepath.Join(dir, "benchstat")
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command to build benchstat %s with", v)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Built into a directory of its own, then renamed into place: two
	// rdmaab at once each get a whole binary.
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(progress, "rdmaab: building benchstat of %s@%s (once) into %s\n", perfModule, v, dir)
	pkg := perfModule + "/cmd/benchstat@" + v
	install := func(extra ...string) error {
		cmd := exec.CommandContext(ctx, goCmd, "install", pkg)
		cmd.Dir = tmp // outside any module or workspace
		cmd.Env = append(os.Environ(), append([]string{"GOBIN=" + tmp, "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local"}, extra...)...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go install %s: %v: %s", pkg, err, strings.TrimSpace(errb.String()))
		}
		return nil
	}
	err = install()
	if err != nil {
		// Offline: the module cache as the proxy. What it holds was
		// checked against go.sum or the checksum database when it was
		// downloaded, so the database is not asked again.
		if mc, merr := exec.CommandContext(ctx, goCmd, "env", "GOMODCACHE").Output(); merr == nil && len(bytes.TrimSpace(mc)) > 0 {
			proxy := "file://" + filepath.Join(string(bytes.TrimSpace(mc)), "cache", "download")
			if err2 := install("GOPROXY="+proxy, "GOSUMDB=off"); err2 == nil {
				err = nil
			} else {
				err = fmt.Errorf("%w; offline, from the module cache: %v", err, err2)
			}
		}
	}
	if err != nil {
		return "", err
	}
	if err := os.Rename(filepath.Join(tmp, "benchstat"), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// benchstatCmd returns the command that runs benchstat with args, and a
// note of the ways that failed before it.
func benchstatCmd(ctx context.Context, progress io.Writer, args ...string) (*exec.Cmd, error) {
	var errs []error
	if v := perfVersion(); v != "" {
		bin, err := pinnedBenchstat(ctx, v, progress)
		if err == nil {
			return exec.CommandContext(ctx, bin, args...), nil
		}
		errs = append(errs, err)
	} else {
		errs = append(errs, errors.New("this rdmaab has no x/perf version to run benchstat of"))
	}
	if p, err := exec.LookPath("benchstat"); err == nil {
		return exec.CommandContext(ctx, p, args...), nil
	}
	if _, err := exec.LookPath("go"); err == nil {
		return exec.CommandContext(ctx, "go", append([]string{"tool", "benchstat"}, args...)...), errors.Join(errs...)
	}
	return nil, errors.Join(append(errs, errors.New("no benchstat on PATH"))...)
}

// Benchstat runs benchstat with args (files and its flags) and writes its
// table to w: the benchstat of the x/perf rdmaab was built with (see
// above), for "rdmaab benchstat".
func Benchstat(ctx context.Context, w, progress io.Writer, args ...string) error {
	return benchstat(ctx, w, progress, args...)
}

// benchstat prints benchstat's table of the files (benchstatCmd says
// which benchstat).
func benchstat(ctx context.Context, w, progress io.Writer, args ...string) error {
	cmd, before := benchstatCmd(ctx, progress, args...)
	if cmd == nil {
		return fmt.Errorf("%v (go install %s/cmd/benchstat@latest)", before, perfModule)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := fmt.Sprintf("%s: %v: %s", strings.Join(cmd.Args[:len(cmd.Args)-len(args)], " "), err, strings.TrimSpace(errb.String()))
		if before != nil {
			msg = fmt.Sprintf("%v; then %s", before, msg)
		}
		return fmt.Errorf("%s (go install %s/cmd/benchstat@latest, or put benchstat on PATH)", msg, perfModule)
	}
	_, err := w.Write(out.Bytes())
	return err
}
