package sticky

import (
	"bytes"
	"errors"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// failAfter accepts n writes, then fails every one.
type failAfter struct {
	n    int
	got  bytes.Buffer
	fail error
}

func (w *failAfter) Write(b []byte) (int, error) {
	if w.n == 0 {
		return 0, w.fail
	}
	w.n--
	return w.got.Write(b)
}

func TestPrinterKeepsFirstError(t *testing.T) {
	w := &failAfter{n: 1, fail: errors.New("disk full")}
	p := &Printer{W: w}
	p.Printf("a %d\n", 1)
	p.Printf("b\n")
	w.fail = errors.New("later")
	p.Printf("c\n")
	if w.got.String() != "a 1\n" || p.Err == nil || p.Err.Error() != "disk full" {
		t.Errorf("wrote %q, err %v; want %q and the first error", w.got.String(), p.Err, "a 1\n")
	}
	var ok bytes.Buffer
	q := &Printer{W: &ok}
	q.Printf("%s-%d", "x", 2)
	if ok.String() != "x-2" || q.Err != nil {
		t.Errorf("%q, %v", ok.String(), q.Err)
	}
}
