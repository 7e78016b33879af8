package flagvar

import (
	"flag"
	"io"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStrings(t *testing.T) {
	var s Strings
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Var(&s, "env", "")
	if err := fs.Parse([]string{"-env", "A=1", "-env", "B=2"}); err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s[0] != "A=1" || s[1] != "B=2" || s.String() != "A=1,B=2" {
		t.Errorf("%q (%s)", []string(s), s.String())
	}
}

func TestPercent(t *testing.T) {
	for in, want := range map[string]float64{"5%": 0.05, "0.05": 0.05, " 2% ": 0.02, "0": 0, "150%": 1.5} {
		if got, err := ParsePercent(in); err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"five", "-1%", "", "%"} {
		if _, err := ParsePercent(in); err == nil {
			t.Errorf("ParsePercent(%q) succeeded", in)
		}
	}
	v := 0.05
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(Percent{&v}, "threshold", "")
	if err := fs.Parse([]string{"-threshold", "2.5%"}); err != nil || v != 0.025 || (Percent{&v}).String() != "2.5%" {
		t.Errorf("-threshold 2.5%%: %v, %v, %s", v, err, Percent{&v})
	}
	if (Percent{}).String() != "0" {
		t.Error("a zero Percent prints other than 0")
	}
	if err := fs.Parse([]string{"-threshold", "x"}); err == nil {
		t.Error("-threshold x accepted")
	}
}
