package oob

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/rdmabench/rdmabench/internal/spec"
)

// The encoding of messages into frames and back; doc.go gives the layout
// of every frame.

// Marshal encodes m as one frame.
func Marshal(m Message) ([]byte, error) { return Append(nil, m) }

// Append appends the frame encoding m to dst. It fails, leaving dst's
// contents unchanged, on a string over MaxString or not UTF-8, or a payload
// over MaxPayload.
func Append(dst []byte, m Message) ([]byte, error) {
	if m == nil {
		return dst, errors.New("oob: cannot encode a nil Message")
	}
	start := len(dst)
	e := &encoder{b: append(dst, byte(m.Type()), 0, 0, 0), t: m.Type()}
	m.appendPayload(e)
	if e.err != nil {
		return dst[:start], e.err
	}
	n := len(e.b) - start - HeaderSize
	if n > MaxPayload {
		return dst[:start], fmt.Errorf("oob: %v payload is %d bytes, over the %d-byte bound", m.Type(), n, MaxPayload)
	}
	binary.BigEndian.PutUint16(e.b[start+2:], uint16(n))
	return e.b, nil
}

// Decode decodes exactly one frame. Errors match ErrMalformed.
func Decode(frame []byte) (Message, error) {
	if len(frame) < HeaderSize {
		return nil, malformed("truncated header (%d of %d bytes)", len(frame), HeaderSize)
	}
	t, n, err := parseHeader(frame)
	if err != nil {
		return nil, err
	}
	p := frame[HeaderSize:]
	if len(p) < n {
		return nil, malformed("truncated %v payload (%d of %d bytes)", t, len(p), n)
	}
	if len(p) > n {
		return nil, malformed("%d trailing bytes after the %d-byte %v frame", len(p)-n, HeaderSize+n, t)
	}
	return decodePayload(t, p)
}

// checkHeaderPrefix checks as much of a frame header as h holds (up to
// HeaderSize bytes), so that a stream of garbage is rejected on its first
// byte rather than after a wait for more.
func checkHeaderPrefix(h []byte) error {
	if len(h) >= 1 && !Type(h[0]).known() {
		return malformed("unknown message type 0x%02x", h[0])
	}
	if len(h) >= 2 && h[1] != 0 {
		return malformed("reserved header byte is 0x%02x, not 0", h[1])
	}
	if len(h) >= HeaderSize {
		if n := binary.BigEndian.Uint16(h[2:]); n > MaxPayload {
			return malformed("%v payload length %d is over the %d-byte bound", Type(h[0]), n, MaxPayload)
		}
	}
	return nil
}

func parseHeader(h []byte) (Type, int, error) {
	if err := checkHeaderPrefix(h[:HeaderSize]); err != nil {
		return 0, 0, err
	}
	return Type(h[0]), int(binary.BigEndian.Uint16(h[2:])), nil
}

func decodePayload(t Type, p []byte) (Message, error) {
	var m Message
	switch t {
	case TypeHello:
		m = Hello{}
	case TypeParams:
		m = Params{}
	case TypeEndpoint:
		m = Endpoint{}
	case TypeRun:
		m = Run{}
	case TypeChallenge:
		m = Challenge{}
	case TypeAuth:
		m = Auth{}
	case TypeBarrier:
		m = Barrier{}
	case TypeDone:
		m = Done{}
	case TypeError:
		m = Error{}
	default:
		return nil, malformed("unknown message type 0x%02x", uint8(t))
	}
	d := &decoder{p: p, t: t}
	m = m.decodePayload(d)
	if d.err == nil && d.off != len(p) {
		d.err = malformed("%v payload has %d trailing bytes", t, len(p)-d.off)
	}
	if d.err != nil {
		return nil, d.err
	}
	return m, nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// encoder appends big-endian fields; the first error sticks.
type encoder struct {
	b   []byte
	t   Type
	err error
}

func (e *encoder) u8(v uint8)   { e.b = append(e.b, v) }
func (e *encoder) u16(v uint16) { e.b = binary.BigEndian.AppendUint16(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.BigEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = binary.BigEndian.AppendUint64(e.b, v) }
func (e *encoder) raw(v []byte) { e.b = append(e.b, v...) }

func (e *encoder) str(field, s string) {
	if e.err != nil {
		return
	}
	if len(s) > MaxString {
		e.err = fmt.Errorf("oob: %v %s is %d bytes, over the %d-byte bound", e.t, field, len(s), MaxString)
		return
	}
	if !utf8.ValidString(s) {
		e.err = fmt.Errorf("oob: %v %s is not valid UTF-8: %q", e.t, field, s)
		return
	}
	e.u16(uint16(len(s)))
	e.b = append(e.b, s...)
}

// decoder reads big-endian fields; the first error sticks and later reads
// return zero values.
type decoder struct {
	p   []byte
	off int
	t   Type
	err error
}

func (d *decoder) take(n int, field string) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.p)-d.off < n {
		d.err = malformed("%v payload ends inside %s (%d bytes left, %d needed)", d.t, field, len(d.p)-d.off, n)
		return nil
	}
	b := d.p[d.off : d.off+n]
	d.off += n
	return b
}

func (d *decoder) u8(field string) uint8 {
	if b := d.take(1, field); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) u16(field string) uint16 {
	if b := d.take(2, field); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) u32(field string) uint32 {
	if b := d.take(4, field); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64(field string) uint64 {
	if b := d.take(8, field); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) str(field string) string {
	n := int(d.u16(field + " length"))
	if d.err != nil {
		return ""
	}
	if n > MaxString {
		d.err = malformed("%v %s is %d bytes, over the %d-byte bound", d.t, field, n, MaxString)
		return ""
	}
	b := d.take(n, field)
	if d.err != nil {
		return ""
	}
	if !utf8.Valid(b) {
		d.err = malformed("%v %s is not valid UTF-8: %q", d.t, field, b)
		return ""
	}
	return string(b)
}

func (m Hello) appendPayload(e *encoder) {
	e.raw([]byte(Magic))
	e.u16(m.Version)
	e.str("software", m.Software)
}

func (Hello) decodePayload(d *decoder) Message {
	var m Hello
	if b := d.take(len(Magic), "magic"); b != nil && string(b) != Magic {
		d.err = malformed("Hello magic is %q, not %q", b, Magic)
	}
	m.Version = d.u16("version")
	m.Software = d.str("software")
	return m
}

func (m Params) appendPayload(e *encoder) {
	e.u8(uint8(m.Op))
	e.u8(uint8(m.Transport))
	e.u32(m.Size)
	e.u32(m.MTU)
	e.u32(uint32(m.Inline))
	e.u32(uint32(m.GIDIndex))
	e.u64(uint64(m.IdleTimeout))
	e.u8(uint8(m.Flags))
	e.u8(m.QoS.TrafficClass)
	e.u32(m.QoS.FlowLabel)
	e.u8(m.QoS.SL)
	e.u16(m.QoS.PKeyIndex)
	e.str("device", m.Device)
}

func (Params) decodePayload(d *decoder) Message {
	var m Params
	m.Op = spec.Op(d.u8("op"))
	m.Transport = spec.Transport(d.u8("transport"))
	m.Size = d.u32("size")
	m.MTU = d.u32("mtu")
	m.Inline = int32(d.u32("inline"))
	m.GIDIndex = int32(d.u32("gid_index"))
	m.IdleTimeout = time.Duration(d.u64("idle_timeout"))
	m.Flags = Flags(d.u8("flags"))
	m.QoS.TrafficClass = d.u8("tclass")
	m.QoS.FlowLabel = d.u32("flow_label")
	m.QoS.SL = d.u8("sl")
	m.QoS.PKeyIndex = d.u16("pkey_index")
	m.Device = d.str("device")
	return m
}

func (m Endpoint) appendPayload(e *encoder) {
	e.str("device", m.Device)
	e.str("firmware", m.Firmware)
	e.str("link_layer", m.LinkLayer)
	e.u8(m.Port)
	e.u16(m.LID)
	e.u32(m.QPN)
	e.u32(m.PSN)
	e.u32(m.QKey)
	e.raw(m.GID[:])
	e.u32(uint32(m.GIDIndex))
	e.u32(m.MTU)
	e.u32(m.RKey)
	e.u64(m.Addr)
	e.u32(m.Size)
	e.str("cm_addr", m.CMAddr)
	e.u64(m.CMCookie)
	e.u32(uint32(m.CPU))
	e.u16(m.Sessions)
}

func (Endpoint) decodePayload(d *decoder) Message {
	var m Endpoint
	m.Device = d.str("device")
	m.Firmware = d.str("firmware")
	m.LinkLayer = d.str("link_layer")
	m.Port = d.u8("port")
	m.LID = d.u16("lid")
	m.QPN = d.u32("qpn")
	m.PSN = d.u32("psn")
	m.QKey = d.u32("qkey")
	copy(m.GID[:], d.take(16, "gid"))
	m.GIDIndex = int32(d.u32("gid_index"))
	m.MTU = d.u32("mtu")
	m.RKey = d.u32("rkey")
	m.Addr = d.u64("addr")
	m.Size = d.u32("size")
	m.CMAddr = d.str("cm_addr")
	m.CMCookie = d.u64("cm_cookie")
	m.CPU = int32(d.u32("cpu"))
	m.Sessions = d.u16("sessions")
	return m
}

func (m Run) appendPayload(e *encoder) {
	e.u32(m.Seq)
	e.u32(m.Size)
}

func (Run) decodePayload(d *decoder) Message {
	var m Run
	m.Seq = d.u32("seq")
	m.Size = d.u32("size")
	return m
}

func (m Barrier) appendPayload(e *encoder) { e.u32(m.Seq) }

func (Barrier) decodePayload(d *decoder) Message { return Barrier{Seq: d.u32("seq")} }

func (m Done) appendPayload(e *encoder) { e.u64(m.RoundTrips) }

func (Done) decodePayload(d *decoder) Message { return Done{RoundTrips: d.u64("round_trips")} }

// An Error's code and msg are frozen; a CodeCompletion Error (version 6,
// sent only once the handshake agreed on a version) carries its
// completion's fields after them, and no other Error does.
func (m Error) appendPayload(e *encoder) {
	e.u16(uint16(m.Code))
	e.str("msg", m.Msg)
	if m.Code != CodeCompletion {
		if e.err == nil && (m.WCStatus != 0 || m.VendorErr != 0 || m.RecvQueue) {
			e.err = fmt.Errorf("oob: Error with code %d carries completion fields, which only code %d (CodeCompletion) may", m.Code, CodeCompletion)
		}
		return
	}
	e.u32(m.WCStatus)
	e.u32(m.VendorErr)
	var queue uint8
	if m.RecvQueue {
		queue = 1
	}
	e.u8(queue)
}

func (Error) decodePayload(d *decoder) Message {
	var m Error
	m.Code = Code(d.u16("code"))
	m.Msg = d.str("msg")
	if m.Code != CodeCompletion {
		return m
	}
	m.WCStatus = d.u32("wc_status")
	m.VendorErr = d.u32("vendor_err")
	switch q := d.u8("queue"); {
	case q == 1:
		m.RecvQueue = true
	case q > 1 && d.err == nil:
		d.err = malformed("Error queue is %d, not 0 (send) or 1 (receive)", q)
	}
	return m
}
