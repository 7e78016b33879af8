package ghaction

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// actionlintVersion is the actionlint the test runs (go run, pinned).
const actionlintVersion = "v1.7.12"

var (
	root   = filepath.Join("..", "..")
	action = filepath.Join(root, ".github", "actions", "rdmabench")
	script = filepath.Join(action, "rdmabench-ci.sh")
)

// needTools skips where the host tools the script uses are missing: inside
// the VM (the host run covers this).
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: no %s on PATH (a host test: inside the VM there is no toolchain)", tool)
		}
	}
}

// project makes a repository with the action at its place and the
// workflow, for actionlint (which finds local actions from the git root).
func project(t *testing.T, workflow string) string {
	t.Helper()
	dir := t.TempDir()
	dst := filepath.Join(dir, ".github", "actions", "rdmabench")
	os.MkdirAll(dst, 0o755)
	for _, n := range []string{"action.yml", "rdmabench-ci.sh"} {
		b, err := os.ReadFile(filepath.Join(action, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dst, n), b, 0o755)
	}
	os.MkdirAll(filepath.Join(dir, ".github", "workflows"), 0o755)
	os.WriteFile(filepath.Join(dir, ".github", "workflows", "bench.yml"), []byte(workflow), 0o644)
	run(t, dir, nil, "git", "init", "-q")
	return dir
}

// docWorkflow is the workflow docs/own-project.md shows, using the action
// from this tree.
func docWorkflow(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "own-project.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```yaml\n")
	wf, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/own-project.md has no ```yaml block")
	}
	const remote = "rdmabench/rdmabench/.github/actions/rdmabench@VERSION"
	if !strings.Contains(wf, remote) {
		t.Fatalf("the workflow of docs/own-project.md does not use %s", remote)
	}
	return strings.Replace(wf, remote, "./.github/actions/rdmabench", 1)
}

// actionlint passes the action as docs/own-project.md's workflow uses
// it, and fails an input
// the action does not have (so it read action.yml).
func TestActionlint(t *testing.T) {
	needTools(t, "go", "git")
	lint := func(dir string) (string, error) {
		cmd := exec.Command("go", "run", "github.com/rhysd/actionlint/cmd/actionlint@"+actionlintVersion, "-no-color", "-shellcheck=", "-pyflakes=")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	workflow := docWorkflow(t)
	if out, err := lint(project(t, workflow)); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
	bad := strings.Replace(workflow, "          mode: gate\n", "          mode: gate\n          nosuch: 1\n", 1)
	if out, err := lint(project(t, bad)); err == nil || !strings.Contains(out, "nosuch") {
		t.Errorf("actionlint passed an input the action lacks (%v):\n%s", err, out)
	}
}

// ghEnv is a fake job's environment: GITHUB_* files in a fresh directory,
// PATH with stubs first. It returns the files' directory.
func ghEnv(t *testing.T, stubs map[string]string) (dir string, env []string) {
	t.Helper()
	dir = t.TempDir()
	bin := filepath.Join(dir, "stubs")
	os.MkdirAll(bin, 0o755)
	for name, body := range stubs {
		os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755)
	}
	for _, f := range []string{"summary.md", "output", "path"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GITHUB_STEP_SUMMARY="+filepath.Join(dir, "summary.md"),
		"GITHUB_OUTPUT="+filepath.Join(dir, "output"),
		"GITHUB_PATH="+filepath.Join(dir, "path"),
		"RUNNER_TEMP="+dir,
		"GITHUB_BASE_REF=",
	)
	return dir, env
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runScript runs a step of the script and returns its status and output.
func runScript(t *testing.T, dir string, env []string, step string) (int, string) {
	t.Helper()
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", abs, step)
	cmd.Dir, cmd.Env = dir, env
	b, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(b)
}

func run(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
	}
}
