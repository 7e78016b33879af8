package guest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestGuestEnv(t *testing.T) {
	host := []string{
		"PATH=/home/u/bin:/usr/bin",
		"HOME=/home/u",
		"RDMABENCH_DEVICE=mlx5_0", // the runner's own: not passed
		"RDMABENCH_REQUIRE=0",
		"RDMABENCH_VM=0",
		"RDMABENCH_SIZES=2,64",
		"RDMABENCH_PEER=10.0.0.2",
		"GOTRACEBACK=all",
		"GOFLAGS=-count=1",
		"GOPATH=/home/u/go",
		"SECRET=x",
		"malformed",
	}
	env, err := Env(host, []string{"FOO=a=b", "RDMABENCH_DEVICE=rxe1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"FOO=a=b",
		"GOFLAGS=-count=1",
		"GOTRACEBACK=all",
		"HOME=/tmp",
		"PATH=" + PATH,
		"RDMABENCH_DEVICE=rxe1", // -env wins
		"RDMABENCH_PEER=10.0.0.2",
		"RDMABENCH_REQUIRE=1",
		"RDMABENCH_SIZES=2,64",
		"RDMABENCH_VM=1",
		"RXEVM_OUT=" + OutDir,
		"TMPDIR=/tmp",
	}
	if !slices.Equal(env, want) {
		t.Errorf("guestEnv:\n got %q\nwant %q", env, want)
	}
	for _, bad := range []string{"NOEQUALS", "1X=y", "A-B=c", "=v"} {
		if _, err := Env(nil, []string{bad}); err == nil {
			t.Errorf("-env %q accepted", bad)
		}
	}
}

func TestRunScriptQuoting(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("skipping: no sh on the host:", err)
	}
	weird := []string{"it's", `"dq"`, "$HOME", "a b", "`x`", "back\\slash", "new\nline", ""}
	env := []string{"V=" + weird[0] + weird[2]}
	script := RunScript(env, "/", append([]string{"printf", "<%s>"}, weird...))
	script = strings.Replace(script, "exec", `printf '%s|' "$V"; exec`, 1)
	out, err := exec.Command(sh, "-c", script).Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, script)
	}
	want := "it's$HOME|" + "<it's><\"dq\"><$HOME><a b><`x`><back\\slash><new\nline><>"
	if string(out) != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
}

func TestInitScript(t *testing.T) {
	s := InitScript([]string{"/usr/lib/modules/k/a.ko", "/usr/lib/modules/k/b.ko"}, []string{"/usr/lib/modules/k/9p.ko"}, []string{"/usr/lib/modules/k/virtio_net.ko"})
	for _, want := range []string{
		"/usr/lib/modules/k/a.ko \\\n\t/usr/lib/modules/k/b.ko",
		"rdma link add rxe0 type rxe netdev veth0",
		"rdma link add rxe1 type rxe netdev veth1",
		"$IP rule del pref 0 lookup local",
		"mount -t 9p -o trans=virtio",
		`if [ "$RXEVM_9P" = 1 ] || [ "$RXEVM_COUNTS" = 1 ] || [ "$RXEVM_NUMA2" = 1 ]; then`, // virtio_pci for -numa2's NIC
		"if [ \"$RXEVM_NUMA2\" = 1 ]; then\n\tinsmods \\\n\t/usr/lib/modules/k/virtio_net.ko\n",
		"insmods \\\n\t/usr/lib/modules/k/a.ko",
		"veth_pair veth0 veth1 192.168.77 100 101",
		"wait_active rxe0 rxe1",
		"rdma link add rxe2 type rxe netdev eth0",
		`\036RXEVM-EXIT-%s: %d\n`,
		"poweroff -f",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("init script lacks %q", want)
		}
	}
	if strings.Contains(s, "\n\tip ") || strings.Contains(s, "\nip ") {
		t.Errorf("init script calls busybox's ip applet instead of /usr/bin/ip")
	}
	checkShell(t, s)
	// The marker format /init prints is the one the host looks for.
	if m := marker("N"); !strings.HasPrefix(m, "\x1eRXEVM-EXIT-") || !strings.HasSuffix(m, "N: ") {
		t.Errorf("marker(N) = %q", m)
	}
}

// checkShell checks what every /init must be: the sign of life before
// anything that could hang, and valid sh (where the host has one).
func checkShell(t *testing.T, s string) {
	t.Helper()
	if i := strings.Index(s, AliveLine); i < 0 || i > strings.Index(s, "mount") {
		t.Errorf("alive line missing or after the first mount")
	}
	if sh, err := exec.LookPath("sh"); err == nil {
		if out, err := exec.Command(sh, "-n", "-c", s).CombinedOutput(); err != nil {
			t.Errorf("sh -n: %v\n%s", err, out)
		}
	}
}

// TestSIWScript: /init runs the siw layer's script when it is there; the
// script loads the modules it is given and puts siw0 and siw1 on their
// own veth pair (on veth0, rdma_cm would bind 192.168.77.1 to rxe0).
func TestSIWScript(t *testing.T) {
	init := InitScript(nil, nil, nil)
	if !strings.Contains(init, "if [ -f "+SIWScriptPath+" ]; then\n\t. "+SIWScriptPath) {
		t.Errorf("/init does not source %s", SIWScriptPath)
	}
	s := SIWScript([]string{"/usr/lib/modules/k/libcrc32c.ko", "/usr/lib/modules/k/updates/siw.ko"})
	for _, want := range []string{
		"/usr/lib/modules/k/libcrc32c.ko \\\n\t/usr/lib/modules/k/updates/siw.ko",
		"rdma link add siw0 type siw netdev veth2",
		"rdma link add siw1 type siw netdev veth3",
		"veth_pair veth2 veth3 192.168.78 102 103",
		"wait_active siw0 siw1",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("siw script lacks %q", want)
		}
	}
	if sh, err := exec.LookPath("sh"); err == nil {
		if out, err := exec.Command(sh, "-n", "-c", s).CombinedOutput(); err != nil {
			t.Errorf("sh -n: %v\n%s", err, out)
		}
	}
}
