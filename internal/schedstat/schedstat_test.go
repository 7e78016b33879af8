package schedstat

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseSched(t *testing.T) {
	in := "cat (20954, #threads: 1)\n---------\nse.exec_start   :   672570.217915\n" +
		"se.nr_migrations                             :                    7\n" +
		"nr_switches    :   9\nnr_voluntary_switches  :  0\nnr_involuntary_switches   :    2\n"
	if m, inv, ok := parseSched([]byte(in)); !ok || m != 7 || inv != 2 {
		t.Errorf("parseSched = %d, %d, %v; want 7, 2, true", m, inv, ok)
	}
	if _, _, ok := parseSched([]byte("nr_switches : 9\n")); ok {
		t.Error("a file without the fields read as ok")
	}
}

// TestWatch watches a child that busy-loops and sleeps in turn: it
// must be read (this kernel has /proc/PID/sched) and stop must return.
func TestWatch(t *testing.T) {
	if _, err := os.Stat("/proc/self/sched"); err != nil {
		t.Skipf("skipping: this kernel has no /proc/PID/sched (CONFIG_SCHED_DEBUG): %v", err)
	}
	cmd := exec.Command("sh", "-c", "for i in 1 2 3; do sleep 0.05; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := Watch(cmd.Process.Pid, 10*time.Millisecond)
	cmd.Wait()
	s := stop()
	if !s.Read || s.Migrations < 0 || s.Involuntary < 0 {
		t.Errorf("%+v", s)
	}
	if got := (Stats{}).String(); got != "-" {
		t.Errorf("unread stats print %q", got)
	}
	if !onOneCPU([]byte("Name:\tx\nCpus_allowed_list:\t3\n")) || onOneCPU([]byte("Cpus_allowed_list:\t0-3\n")) || onOneCPU([]byte("Cpus_allowed_list:\t1,3\n")) {
		t.Error("onOneCPU")
	}
	if got := (Stats{Read: true, Migrations: 3, Involuntary: 40, Pinned: 7}).String(); got != "3/40/7" {
		t.Errorf("%q", got)
	}
}
