package qmp

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
		{"0-2", []int{0, 1, 2}, ""},
		{"1,1", nil, "a CPU named twice (CPU 1); want auto"},
	} {
		got, err := ParsePin(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParsePin(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParsePin(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	// runtime.NumCPU counts the CPUs of the affinity mask at start.
	if got, err := ParsePin("auto"); err != nil || len(got) != runtime.NumCPU() {
		t.Errorf("auto = %v, %v; want the %d CPUs this process may use", got, err, runtime.NumCPU())
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
	got, err := VCPUThreads(ctx, sock)
	if err != nil || !reflect.DeepEqual(got, []int{101, 102, 103, 104}) {
		t.Errorf("vcpuThreads = %v, %v", got, err)
	}
	// No socket at all: the wait ends with the context.
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := VCPUThreads(ctx, filepath.Join(t.TempDir(), "none.sock")); err == nil {
		t.Error("vcpuThreads without a socket succeeded")
	}
}
