// Package schedstat reads what the scheduler did to a running process:
// migrations between CPUs and preemptions, summed over its threads, from
// /proc/PID/task/TID/sched (a kernel built with CONFIG_SCHED_DEBUG).
package schedstat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stats is what the scheduler did to a process while it ran, summed
// over its threads, from /proc/PID/task/TID/sched (CONFIG_SCHED_DEBUG):
// migrations between CPUs and involuntary context switches (preemptions),
// and the preemptions of its threads pinned to one CPU alone (the polling
// threads: perftest's one thread, our initiator and responder; a thread
// seen pinned at any read counts as one). A thread's figures are the last
// read before it ended, so they can undercount its last interval.
type Stats struct {
	Read        bool // false: /proc held no sched file (a kernel without it)
	Migrations  int64
	Involuntary int64
	Pinned      int64 // involuntary switches of the threads pinned to one CPU
}

func (s Stats) String() string {
	if !s.Read {
		return "-"
	}
	return fmt.Sprintf("%d/%d/%d", s.Migrations, s.Involuntary, s.Pinned)
}

// Watch reads pid's threads' scheduler statistics every interval
// until stop is called, which returns the last figures seen.
func Watch(pid int, interval time.Duration) (stop func() Stats) {
	done := make(chan struct{})
	var (
		mu   sync.Mutex
		last = map[string][3]int64{} // TID -> migrations, involuntary, pinned (0/1)
		wg   sync.WaitGroup
	)
	read := func() {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/sched", pid))
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue // the thread ended
			}
			m, inv, ok := parseSched(b)
			if !ok {
				continue
			}
			mu.Lock()
			pinned := last[f][2] // once seen pinned, a polling thread (it unpins as its run ends)
			mu.Unlock()
			if st, err := os.ReadFile(filepath.Join(filepath.Dir(f), "status")); err == nil && onOneCPU(st) {
				pinned = 1
			}
			mu.Lock()
			last[f] = [3]int64{m, inv, pinned}
			mu.Unlock()
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() Stats {
		close(done)
		wg.Wait()
		var s Stats
		for _, v := range last {
			s.Read = true
			s.Migrations += v[0]
			s.Involuntary += v[1]
			s.Pinned += v[1] * v[2]
		}
		return s
	}
}

// onOneCPU reports whether a /proc/PID/task/TID/status file says the
// thread may run on one CPU alone ("Cpus_allowed_list:\t3").
func onOneCPU(status []byte) bool {
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			v = strings.TrimSpace(v)
			_, err := strconv.Atoi(v)
			return err == nil
		}
	}
	return false
}

// parseSched reads se.nr_migrations and nr_involuntary_switches from a
// /proc/PID/sched file ("se.nr_migrations    :    12").
func parseSched(b []byte) (migrations, involuntary int64, ok bool) {
	var seen int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), ":")
		if !found {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch strings.TrimSpace(k) {
		case "se.nr_migrations":
			migrations, seen = n, seen|1
		case "nr_involuntary_switches":
			involuntary, seen = n, seen|2
		}
	}
	return migrations, involuntary, seen == 3
}
