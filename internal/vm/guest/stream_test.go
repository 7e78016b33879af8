package guest

import (
	"bytes"
	"strings"
	"testing"
)

func TestExitFilter(t *testing.T) {
	const nonce = "0123abcd"
	m := marker(nonce)
	tests := []struct {
		name      string
		in        string
		out       string
		status    int
		setup, ok bool
	}{
		{"plain", "hello\nworld\n" + m + "3\n", "hello\nworld\n", 3, false, true},
		{"no final newline", "partial" + m + "0\n", "partial", 0, false, true},
		{"crlf", "a\r\nb\r\n" + m + "1\r\n", "a\nb\n", 1, false, true},
		{"lone cr kept", "50%\r100%\r\n" + m + "0\n", "50%\r100%\n", 0, false, true},
		{"after marker dropped", "x\n" + m + "2\nreboot: Power down\n", "x\n", 2, false, true},
		{"setup failure", m + "setup\n", "", 0, true, true},
		{"other nonce passes", "\x1eRXEVM-EXIT-ffff: 9\n" + m + "4\n", "\x1eRXEVM-EXIT-ffff: 9\n", 4, false, true},
		{"no marker", "crashed\n", "crashed\n", 0, false, false},
		{"truncated marker", "x\n" + m[:5], "x\n" + m[:5], 0, false, false},
		{"status cut off", "x\n" + m + "1", "x\n", 0, false, false},
		{"bad status", m + "abc\n", "", 0, false, false},
		{"status 255", m + "255\n", "", 255, false, true},
	}
	for _, tt := range tests {
		// Feed the input in every chunk size, to cover markers, CRs and
		// statuses split across writes.
		for chunk := 1; chunk <= len(tt.in); chunk++ {
			var out bytes.Buffer
			f := NewExitFilter(&out, nonce)
			for s := tt.in; s != ""; {
				n := min(chunk, len(s))
				f.Write([]byte(s[:n]))
				s = s[n:]
			}
			f.Close()
			status, setup, ok := f.Result()
			if out.String() != tt.out || status != tt.status || setup != tt.setup || ok != tt.ok {
				t.Errorf("%s (chunks of %d): out %q status %d setup %v ok %v; want %q %d %v %v",
					tt.name, chunk, out.String(), status, setup, ok, tt.out, tt.status, tt.setup, tt.ok)
				break
			}
		}
	}
}

func TestExitFilterStreams(t *testing.T) {
	// Text that cannot start the marker goes out at once, before the run ends.
	var out bytes.Buffer
	f := NewExitFilter(&out, "n")
	f.Write([]byte("BenchmarkX-4 \t 1000\t 12 ns/op\n"))
	if !strings.HasPrefix(out.String(), "BenchmarkX-4") {
		t.Errorf("output held back: %q", out.String())
	}
	select {
	case <-f.Reported():
		t.Fatal("reported before the marker")
	default:
	}
	f.Write([]byte(marker("n") + "0\n"))
	select {
	case <-f.Reported():
	default:
		t.Fatal("not reported after the marker")
	}
}

func TestConsoleLog(t *testing.T) {
	var echo bytes.Buffer
	c := NewConsole(&echo, AliveLine, ReadyLine)
	c.Write([]byte("[    0.1] kernel\r\nrxevm-guest: init st"))
	select {
	case <-c.Seen(AliveLine):
		t.Fatal("alive before the line was complete")
	default:
	}
	c.Write([]byte("arted\r\nmore\n"))
	select {
	case <-c.Seen(AliveLine):
	default:
		t.Fatal("alive line not seen")
	}
	select {
	case <-c.Seen(ReadyLine):
		t.Fatal("ready seen too early")
	default:
	}
	if got := c.Tail(2); got != "rxevm-guest: init started\nmore" {
		t.Errorf("tail(2) = %q", got)
	}
	if strings.Contains(echo.String(), "\r") {
		t.Errorf("echo kept CRs: %q", echo.String())
	}
	c.Write([]byte(AliveLine + "\n")) // a second alive line must not panic
}
