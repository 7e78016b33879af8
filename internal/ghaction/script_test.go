package ghaction

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// setup installs the missing packages and opens /dev/kvm with a udev rule
// where it exists (apt-get and udevadm stubbed: this host is not a runner).
func TestActionSetup(t *testing.T) {
	needTools(t, "bash")
	for _, kvm := range []bool{true, false} {
		dir, env := ghEnv(t, map[string]string{
			"dpkg":    "exit 1\n", // nothing installed
			"apt-get": `echo "apt-get $*" >>"$STUB_LOG"` + "\n",
			"udevadm": `echo "udevadm $*" >>"$STUB_LOG"` + "\n",
			"sudo":    `exec "$@"` + "\n",
		})
		rules := filepath.Join(dir, "rules.d")
		os.MkdirAll(rules, 0o755)
		dev := filepath.Join(dir, "kvm")
		if kvm {
			os.WriteFile(dev, nil, 0o644)
		}
		osRelease := filepath.Join(dir, "os-release")
		os.WriteFile(osRelease, []byte("ID=ubuntu\nVERSION_ID=\"24.04\"\n"), 0o644)
		env = append(env, "STUB_LOG="+filepath.Join(dir, "log"), "ACTION_KVM="+dev, "ACTION_UDEV_RULES="+rules, "ACTION_OS_RELEASE="+osRelease)
		code, out := runScript(t, dir, env, "setup")
		if code != 0 {
			t.Fatalf("kvm %v: status %d\n%s", kvm, code, out)
		}
		if !strings.Contains(out, "this runner is ubuntu: rxevm builds its guest from Debian bookworm's packages, so run the job in a debian:bookworm container") {
			t.Errorf("kvm %v: no word of the Debian container on Ubuntu:\n%s", kvm, out)
		}
		log := read(t, filepath.Join(dir, "log"))
		if !strings.Contains(log, "apt-get install -y -qq --no-install-recommends qemu-system-x86 busybox-static libibverbs-dev librdmacm-dev git") {
			t.Errorf("kvm %v: the packages were not installed:\n%s", kvm, log)
		}
		rule, err := os.ReadFile(filepath.Join(rules, "99-rdmabench-kvm.rules"))
		switch {
		case kvm && (err != nil || !strings.Contains(string(rule), `KERNEL=="kvm"`) || !strings.Contains(string(rule), `MODE="0666"`)):
			t.Errorf("with /dev/kvm: rule %q, %v", rule, err)
		case kvm && !strings.Contains(log, "udevadm trigger --name-match=kvm"):
			t.Errorf("with /dev/kvm: udev not triggered:\n%s", log)
		case !kvm && (err == nil || !strings.Contains(out, "the VM runs under emulation")):
			t.Errorf("without /dev/kvm: rule %q, output:\n%s", rule, out)
		}
	}
}

// tools builds rdmaab and rxevm from the action's tree and puts them on
// the job's PATH.
func TestActionTools(t *testing.T) {
	needTools(t, "bash", "go")
	dir, env := ghEnv(t, nil)
	if code, out := runScript(t, dir, env, "tools"); code != 0 {
		t.Fatalf("status %d\n%s", code, out)
	}
	bin := strings.TrimSpace(read(t, filepath.Join(dir, "path")))
	for _, c := range []string{"rdmaab", "rxevm"} {
		if fi, err := os.Stat(filepath.Join(bin, c)); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s in %q: %v", c, bin, err)
		}
	}
}

// rdmaabStub builds rdmaab and returns a stub of it for the job's PATH
// that logs its arguments and answers as rdmaab gate does on the recorded
// duet of a 36x slower self-timed benchmark (the VM cannot run here).
func rdmaabStub(t *testing.T) (real, stub string) {
	t.Helper()
	real = filepath.Join(t.TempDir(), "rdmaab")
	run(t, root, nil, "go", "build", "-o", real, "./cmd/rdmaab")
	rec, err := filepath.Abs(filepath.Join(root, "internal", "abrun", "testdata", "selftimed"))
	if err != nil {
		t.Fatal(err)
	}
	return real, `echo "rdmaab $*" >>"$STUB_LOG"
case $1 in benchstat) exec ` + real + ` "$@" ;; esac
exec ` + real + ` gate -metrics p50-ns ` + rec + `/old.txt ` + rec + `/new.txt
`
}

// userRepo is the user's checkout: two commits.
func userRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	git := func(args ...string) {
		run(t, repo, nil, "git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("1\n"), 0o644)
	git("add", ".")
	git("commit", "-qm", "one")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("2\n"), 0o644)
	git("commit", "-qam", "two")
	return repo
}

// run, gate mode: rdmaab -gate base head with the inputs, its report and
// verdict in the job summary, its status as the step's and in the outputs.
func TestActionRunGate(t *testing.T) {
	needTools(t, "bash", "go", "git")
	_, stub := rdmaabStub(t)
	dir, env := ghEnv(t, map[string]string{"rdmaab": stub})
	repo := userRepo(t)
	env = append(env, "STUB_LOG="+filepath.Join(dir, "log"), "INPUT_MODE=gate", "INPUT_BASE=HEAD~1",
		"INPUT_BENCH=MyPath", "INPUT_COUNT=10", "INPUT_FLAGS=-burst 100 -seed 7")
	code, out := runScript(t, repo, env, "run")
	if code != 1 {
		t.Errorf("status %d, want 1 (regressed)\n%s", code, out)
	}
	log := read(t, filepath.Join(dir, "log"))
	if !strings.Contains(log, "rdmaab -gate -pkg . -bench MyPath -benchtime 2000x -count 10 -metrics p50-ns -threshold 5% -out "+dir+"/rdmabench-results -burst 100 -seed 7 HEAD~1 HEAD") {
		t.Errorf("rdmaab's command line:\n%s", log)
	}
	sum := read(t, filepath.Join(dir, "summary.md"))
	for _, s := range []string{"### rdmabench gate (HEAD~1 vs HEAD): regressed (exit status 1)", "- paired: FAIL", "- judged 2 metrics: 1 by duet turns, 1 by duet pairs of runs", "```\n", "FAIL BenchmarkMyPath/path=mine/size=64-4 p50-ns"} {
		if !strings.Contains(sum, s) {
			t.Errorf("job summary lacks %q:\n%s", s, sum)
		}
	}
	output := read(t, filepath.Join(dir, "output"))
	if want := "status=1\noutcome=regressed\nresults=" + dir + "/rdmabench-results\n"; output != want {
		t.Errorf("step outputs %q, want %q", output, want)
	}

	// No base input and no pull request: a failure that says what to set.
	dir, env = ghEnv(t, map[string]string{"rdmaab": stub})
	code, out = runScript(t, repo, append(env, "STUB_LOG="+filepath.Join(dir, "log")), "run")
	if code != 3 || !strings.Contains(out, "set the input base") || !strings.Contains(read(t, filepath.Join(dir, "output")), "outcome=failed") {
		t.Errorf("no base: status %d, want 3\n%s", code, out)
	}
	if !strings.Contains(read(t, filepath.Join(dir, "summary.md")), ": failed (exit status 3)") {
		t.Errorf("no base: the summary does not say it failed")
	}
}

// On a pull request the base is origin/$GITHUB_BASE_REF, fetched where
// the checkout lacks it (a shallow clone of the head branch).
func TestActionRunGateFetchesTheBase(t *testing.T) {
	needTools(t, "bash", "go", "git")
	_, stub := rdmaabStub(t)
	origin := userRepo(t)
	run(t, origin, nil, "git", "branch", "topic")
	clone := filepath.Join(t.TempDir(), "clone")
	run(t, "", nil, "git", "clone", "-q", "--depth", "1", "--single-branch", "--branch", "topic", "file://"+origin, clone)
	dir, env := ghEnv(t, map[string]string{"rdmaab": stub})
	env = append(env, "STUB_LOG="+filepath.Join(dir, "log"), "GITHUB_BASE_REF=main")
	code, out := runScript(t, clone, env, "run")
	if code != 1 || !strings.Contains(out, "origin/main is not in the checkout: fetching it") {
		t.Errorf("status %d, want 1 after fetching the base\n%s", code, out)
	}
	if log := read(t, filepath.Join(dir, "log")); !strings.HasSuffix(strings.TrimSpace(log), "origin/main HEAD") {
		t.Errorf("rdmaab's command line: %s", log)
	}
}

// run, bench mode: go test -exec rxevm (stubbed: it prints recorded
// results) and benchstat's table in the summary.
func TestActionRunBench(t *testing.T) {
	needTools(t, "bash", "go")
	real, _ := rdmaabStub(t)
	goCmd, _ := exec.LookPath("go")
	rec, _ := filepath.Abs(filepath.Join(root, "internal", "abrun", "testdata", "selftimed", "old.txt"))
	dir, env := ghEnv(t, map[string]string{
		"go":     `if [ "$1" = test ]; then echo "go $*" >>"$STUB_LOG"; cat ` + rec + `; exit 0; fi` + "\nexec " + goCmd + ` "$@"` + "\n",
		"rdmaab": "exec " + real + ` "$@"` + "\n",
	})
	gocache, err := exec.Command(goCmd, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env = append(env, "STUB_LOG="+filepath.Join(dir, "log"), "INPUT_MODE=bench", "INPUT_PACKAGE=./mybench",
		"XDG_CACHE_HOME="+t.TempDir(), "GOCACHE="+strings.TrimSpace(string(gocache)))
	code, out := runScript(t, dir, env, "run")
	if code != 0 {
		t.Fatalf("status %d\n%s", code, out)
	}
	if log := read(t, filepath.Join(dir, "log")); !strings.Contains(log, "go test -run ^$ -bench . -benchtime 2000x -count 10 -exec rxevm ./mybench") {
		t.Errorf("go test's command line: %s", log)
	}
	sum := read(t, filepath.Join(dir, "summary.md"))
	if !strings.Contains(sum, "### rdmabench benchmarks: pass (exit status 0)") || !strings.Contains(sum, "sec/op") {
		t.Errorf("job summary:\n%s", sum)
	}
}
