package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestPinPlan(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		err  string
	}{
		{"none", nil, ""},
		{"0,1", []int{0, 1}, ""},
		{" 3 ", []int{3}, ""},
		{"0,x", nil, "want auto, none or host CPU numbers"},
		{"-1", nil, "want auto, none or host CPU numbers"},
	} {
		got, err := pinPlan(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("pinPlan(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("pinPlan(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	// runtime.NumCPU counts the CPUs of the affinity mask at start.
	if got, err := pinPlan("auto"); err != nil || len(got) != runtime.NumCPU() {
		t.Errorf("auto = %v, %v; want the %d CPUs this process may use", got, err, runtime.NumCPU())
	}
}

func TestIsolateArgs(t *testing.T) {
	for smp, want := range map[int]string{
		2: "", // no housekeeping CPU would remain
		3: "nohz_full=1-2 irqaffinity=0",
		4: "nohz_full=2-3 irqaffinity=0-1",
		8: "nohz_full=6-7 irqaffinity=0-5",
	} {
		if got := isolateArgs(smp); got != want {
			t.Errorf("isolateArgs(%d) = %q, want %q", smp, got, want)
		}
	}
	v := &vm{smp: 4, isolate: true, qmpSock: "/tmp/q.sock", accel: "tcg"}
	args := strings.Join(v.qemuArgs(), " ")
	if !strings.Contains(args, "tsc=reliable nohz_full=2-3 irqaffinity=0-1") || !strings.Contains(args, "-qmp unix:/tmp/q.sock,server=on,wait=off") {
		t.Errorf("qemu args: %s", args)
	}
	v = &vm{smp: 4, accel: "tcg"}
	if args := strings.Join(v.qemuArgs(), " "); strings.Contains(args, "nohz_full") || strings.Contains(args, "-qmp") {
		t.Errorf("defaults add isolation or QMP: %s", args)
	}
}

// fakeQMP serves QEMU's QMP exchange as far as vcpuThreads needs it: a
// greeting, an event between commands, and query-cpus-fast answered with
// tids (out of order, as QEMU does not promise an order).
func fakeQMP(t *testing.T, tids []int) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "qmp.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		fmt.Fprintln(c, `{"QMP": {"version": {"qemu": {"major": 7}}, "capabilities": []}}`)
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			switch {
			case strings.Contains(line, "qmp_capabilities"):
				fmt.Fprintln(c, `{"event": "RESUME", "timestamp": {"seconds": 1}}`)
				fmt.Fprintln(c, `{"return": {}}`)
			case strings.Contains(line, "query-cpus-fast"):
				var parts []string
				for i := len(tids) - 1; i >= 0; i-- {
					parts = append(parts, fmt.Sprintf(`{"cpu-index": %d, "thread-id": %d, "target": "x86_64"}`, i, tids[i]))
				}
				fmt.Fprintf(c, "{\"return\": [%s]}\n", strings.Join(parts, ", "))
			}
		}
	}()
	return sock
}

func TestVCPUThreads(t *testing.T) {
	sock := fakeQMP(t, []int{101, 102, 103, 104})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	got, err := vcpuThreads(ctx, sock)
	if err != nil || !reflect.DeepEqual(got, []int{101, 102, 103, 104}) {
		t.Errorf("vcpuThreads = %v, %v", got, err)
	}
	// No socket at all: the wait ends with the context.
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := vcpuThreads(ctx, filepath.Join(t.TempDir(), "none.sock")); err == nil {
		t.Error("vcpuThreads without a socket succeeded")
	}
}
