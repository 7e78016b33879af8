package turn

import "testing"

// FuzzParse: the conductor's and the processes' lines never make Parse
// or the client's allocation-free reader of "go <K>" panic; the two agree
// on every "go" line the client takes; a done line Release writes parses
// back to its burst.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"hello rdmabench-turn/1 42", "want", "go 200", "go 0", "go -1", "go 99999999999999999999", "go 1 2",
		"done burst 3 7 200 25000 21000 BenchmarkRDMAWrite/size=2", "done warmup 1 0 1000 0 0 run",
		"done burst 1 1 1 1 1", "done other 1 1 1 1 1 x", "done burst -1 1 1 1 1 x", "", " ", "hello", "\x00go 1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		m, err := Parse(line)
		if err != nil {
			if m != (Msg{}) {
				t.Fatalf("Parse(%q) returned %+v with %v", line, m, err)
			}
		}
		if k, ok := parseGo([]byte(line)); ok {
			if err != nil || m.Verb != "go" || m.K != k {
				t.Fatalf("parseGo(%q) = %d, Parse = %+v, %v", line, k, m, err)
			}
		}
		if err != nil || m.Verb != "done" {
			return
		}
		b := m.Burst
		out := appendDone(nil, b)
		back, err := Parse(string(out))
		if err != nil || back.Burst != b {
			t.Fatalf("%+v written as %q parses to %+v, %v", b, out, back.Burst, err)
		}
	})
}
