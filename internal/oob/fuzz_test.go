package oob_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rdmabench/rdmabench/internal/oob"
)

// FuzzDecode: decoding never panics, every failure is ErrMalformed, and
// whatever decodes re-encodes to the very same bytes (the encoding is
// canonical).
func FuzzDecode(f *testing.F) {
	for _, m := range allMessages() {
		b, err := oob.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-1])                   // truncated
		f.Add(append(b, 0))                   // trailing byte
		f.Add(append([]byte{0x08}, b[1:]...)) // unknown type
	}
	f.Add([]byte{})
	f.Add([]byte{0x01, 0x00, 0x10, 0x01})             // length over the bound
	f.Add([]byte{0x04, 0x01, 0x00, 0x04, 0, 0, 0, 1}) // reserved byte set
	f.Add([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	f.Add([]byte{0x06, 0x00, 0x00, 0x05, 0x00, 0x01, 0x00, 0x01, 0xff}) // string not UTF-8

	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := oob.Decode(data)
		if err != nil {
			if m != nil {
				t.Fatalf("Decode returned %#v with error %v", m, err)
			}
			if !errors.Is(err, oob.ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			return
		}
		b, err := oob.Marshal(m)
		if err != nil {
			t.Fatalf("Decode gave %#v, which Marshal rejects: %v", m, err)
		}
		if !bytes.Equal(b, data) {
			t.Fatalf("%#v re-encodes to\n%x\nnot\n%x", m, b, data)
		}
	})
}
