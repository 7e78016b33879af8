package oob_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

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
		f.Add(b[:len(b)-1])                                     // truncated
		f.Add(append(b, 0))                                     // trailing byte
		f.Add(append([]byte{byte(oob.TypeAuth) + 1}, b[1:]...)) // unknown type (the first after the last known)
		f.Add(append([]byte{0x00}, b[1:]...))                   // type 0: never a type
	}
	f.Add([]byte{})
	f.Add([]byte{0x01, 0x00, 0x10, 0x01})             // length over the bound
	f.Add([]byte{0x04, 0x01, 0x00, 0x04, 0, 0, 0, 1}) // reserved byte set
	f.Add([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	f.Add([]byte{0x06, 0x00, 0x00, 0x05, 0x00, 0x01, 0x00, 0x01, 0xff})                         // string not UTF-8
	f.Add([]byte{0x06, 0x00, 0x00, 0x0d, 0x00, 0x09, 0x00, 0x00, 0, 0, 0, 1, 0, 0, 0, 0, 0x02}) // completion queue 2: not 0 or 1

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

// TestFuzzDecodeSeedsUnknown: the "unknown type" seeds are unknown: 0x08
// once was, until version 3 made it Challenge.
func TestFuzzDecodeSeedsUnknown(t *testing.T) {
	b, err := oob.Marshal(oob.Barrier{Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []byte{byte(oob.TypeAuth) + 1, 0} {
		if _, err := oob.Decode(append([]byte{typ}, b[1:]...)); !errors.Is(err, oob.ErrMalformed) {
			t.Errorf("type 0x%02x decodes: %v", typ, err)
		}
	}
}

// FuzzAcceptHandshake feeds a client's byte stream to the server's side
// of the handshake and its wait for the first request, as rdmapeer reads
// them (AcceptWithin, then Next by the same deadline). It never panics or
// hangs; what it refuses it refuses with an error of the package's kinds;
// what it accepts began with this version's Hello.
func FuzzAcceptHandshake(f *testing.F) {
	hello, _ := oob.Marshal(oob.Hello{Version: oob.Version, Software: "fuzz"})
	auth, _ := oob.Marshal(oob.Auth{Addr: "pipe"})
	params, _ := oob.Marshal(oob.Params{Op: 1, Transport: 1, Size: 64, Inline: -1, GIDIndex: -1})
	rail, _ := oob.Marshal(oob.Params{Op: 1, Transport: 1, Size: 64, Inline: -1, GIDIndex: -1, Device: "rxe1"})
	load, _ := oob.Marshal(oob.Params{Op: 1, Transport: 1, Size: 4096, GIDIndex: -1, Flags: oob.FlagLoad})
	badLoad, _ := oob.Marshal(oob.Params{Op: 2, Transport: 2, Size: 4096, GIDIndex: -1, Flags: oob.FlagLoad | oob.FlagCM | 0x80})
	old, _ := oob.Marshal(oob.Hello{Version: 3, Software: "rdmabench v0.3.0"})
	v5, _ := oob.Marshal(oob.Hello{Version: 5, Software: "rdmabench before rails"})
	errm, _ := oob.Marshal(oob.Error{Code: oob.CodeInternal, Msg: "x\nforged"})
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, seed := range [][]byte{
		cat(hello, auth, params), cat(hello, auth, rail), cat(hello, auth, load), cat(hello, auth, badLoad), cat(hello, auth), cat(hello), cat(old), cat(v5, auth, params), cat(errm),
		cat(hello, params), cat(hello, auth, auth), cat(hello, auth, params)[:len(hello)+3],
		[]byte("GET / HTTP/1.1\r\n\r\n"), {},
	} {
		f.Add(false, seed)
		f.Add(true, seed)
	}
	f.Fuzz(func(t *testing.T, withToken bool, data []byte) {
		server, client := net.Pipe()
		defer client.Close()
		go func() { _, _ = io.Copy(io.Discard, client) }() // what the server says
		go func() {
			_, _ = client.Write(data)
			client.Close() // then EOF: no wait for a deadline
		}()
		token := ""
		if withToken {
			token = "fuzz-token"
		}
		start := time.Now()
		c, err := oob.AcceptWithin(server, time.Second, token)
		if err == nil {
			_, err = c.Next(0)
			c.Close()
			if len(data) < len(hello) || data[0] != byte(oob.TypeHello) {
				t.Fatalf("accepted a handshake that does not open with a Hello: %x", data)
			}
			if withToken {
				t.Fatalf("accepted a client without the token: %x", data)
			}
		}
		if time.Since(start) > 3*time.Second {
			t.Fatalf("took %v, past the handshake's deadline", time.Since(start))
		}
		if err == nil || errors.Is(err, io.EOF) {
			return
		}
		var perr *oob.Error
		switch {
		case errors.Is(err, oob.ErrNotPeer), errors.Is(err, oob.ErrVersion), errors.Is(err, oob.ErrProtocol),
			errors.Is(err, oob.ErrMalformed), errors.Is(err, oob.ErrAuth), errors.Is(err, io.ErrUnexpectedEOF),
			errors.Is(err, io.ErrClosedPipe), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &perr):
		default:
			t.Fatalf("error of no known kind: %v", err)
		}
	})
}
