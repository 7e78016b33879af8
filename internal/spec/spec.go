// Package spec defines what a latency test measures: the operation and
// the transport, with the semantics perftest gives each (which tool, what
// is halved, what the responder's buffer must allow, which sizes and
// variants are possible). It is the one definition the engines, the C
// loops and the wire protocol share; its numeric values are the wire's and
// never change.
package spec

import (
	"fmt"
	"strings"
)

// Op is the RDMA operation a test measures.
type Op uint8

// Operations, with perftest's tool for each. The values are sent on the
// wire (internal/oob) and are frozen.
const (
	Write       Op = 1 // RDMA WRITE ping-pong, ib_write_lat
	Read        Op = 2 // RDMA READ, ib_read_lat
	Send        Op = 3 // SEND/RECV ping-pong, ib_send_lat
	WriteImm    Op = 4 // RDMA WRITE with immediate ping-pong, ib_write_lat --write_with_imm
	FetchAdd    Op = 5 // ATOMIC FETCH_AND_ADD, ib_atomic_lat
	CompareSwap Op = 6 // ATOMIC CMP_AND_SWAP, ib_atomic_lat -A CMP_AND_SWAP
	SendImm     Op = 7 // SEND with immediate ping-pong, ib_send_lat --send_with_imm
)

// Ops lists every operation, in the order the benchmarks run them.
var Ops = []Op{Write, WriteImm, Read, Send, SendImm, FetchAdd, CompareSwap}

var opNames = [...]string{Write: "write", Read: "read", Send: "send", WriteImm: "write_imm",
	FetchAdd: "fetch_add", CompareSwap: "compare_swap", SendImm: "send_imm"}

var opTools = [...]string{Write: "ib_write_lat", Read: "ib_read_lat", Send: "ib_send_lat",
	WriteImm: "ib_write_lat --write_with_imm", FetchAdd: "ib_atomic_lat",
	CompareSwap: "ib_atomic_lat -A CMP_AND_SWAP", SendImm: "ib_send_lat --send_with_imm"}

// Valid reports whether o is one of the operations above.
func (o Op) Valid() bool { return int(o) < len(opNames) && opNames[o] != "" }

func (o Op) String() string {
	if o.Valid() {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Perftest names the perftest command that measures the same thing.
func (o Op) Perftest() string {
	if o.Valid() {
		return opTools[o]
	}
	return ""
}

// ParseOp parses an operation's name as String prints it.
func ParseOp(s string) (Op, error) {
	for _, o := range Ops {
		if o.String() == s {
			return o, nil
		}
	}
	return 0, fmt.Errorf("unknown operation %q: want one of %s", s, joinNames(Ops))
}

// Atomic reports whether o is an 8-byte atomic.
func (o Op) Atomic() bool { return o == FetchAdd || o == CompareSwap }

// OneSided reports whether only the initiator's CPU takes part: READ and
// the atomics, where the responder's CPU does nothing and a sample is one
// operation's completion time.
func (o Op) OneSided() bool { return o == Read || o.Atomic() }

// Halved reports whether a sample is reported as half of it, as perftest
// does: the ping-pong tests (write, send and their immediate forms) report
// RTT/2; read and atomics report the whole operation.
func (o Op) Halved() bool { return !o.OneSided() }

// Receives reports whether the responder and initiator consume receive
// work requests: send, and both immediate forms.
func (o Op) Receives() bool { return o == Send || o == SendImm || o == WriteImm }

// Immediate reports whether the operation carries 32 bits of immediate data.
func (o Op) Immediate() bool { return o == WriteImm || o == SendImm }

// Inline reports whether the operation can send its data inline at all:
// READ and atomics move no data from the send queue.
func (o Op) Inline() bool { return !o.OneSided() }

// Events reports whether perftest allows event-driven completions (-e)
// for o: every operation except plain RDMA WRITE, whose receiver polls
// memory and has no completion to wait for.
func (o Op) Events() bool { return o != Write }

// AtomicSize is the only size an atomic operation moves.
const AtomicSize = 8

// Transport is the queue pair type.
type Transport uint8

// Transports; the values are sent on the wire and are frozen.
const (
	RC Transport = 1 // reliable connected
	UC Transport = 2 // unreliable connected
	UD Transport = 3 // unreliable datagram
)

// Transports lists every transport.
var Transports = []Transport{RC, UC, UD}

// Valid reports whether t is one of the transports above.
func (t Transport) Valid() bool { return t >= RC && t <= UD }

func (t Transport) String() string {
	switch t {
	case RC:
		return "rc"
	case UC:
		return "uc"
	case UD:
		return "ud"
	}
	return fmt.Sprintf("Transport(%d)", uint8(t))
}

// ParseTransport parses "rc", "uc" or "ud" (any case).
func ParseTransport(s string) (Transport, error) {
	for _, t := range Transports {
		if strings.EqualFold(t.String(), s) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown transport %q: want rc, uc or ud", s)
}

// Carries reports whether transport t can carry operation o, with the
// reason when it cannot: UC has no READ or atomics, UD carries sends only.
func (t Transport) Carries(o Op) error {
	switch {
	case !t.Valid():
		return fmt.Errorf("unknown transport %d: want rc, uc or ud", uint8(t))
	case !o.Valid():
		return fmt.Errorf("unknown operation %d: want one of %s", uint8(o), joinNames(Ops))
	case t == UC && o.OneSided():
		return fmt.Errorf("%v over uc: UC has no RDMA READ or atomics; use rc", o)
	case t == UD && o != Send && o != SendImm:
		return fmt.Errorf("%v over ud: UD carries sends only; use rc or uc, or op send", o)
	}
	return nil
}

// GRH is the space a UD receive needs before the payload: the global
// routing header the device writes there.
const GRH = 40

// CheckSize says why size cannot be measured with o over t under the
// path MTU mtu (bytes; 0: unknown), or returns nil: atomics move exactly
// 8 bytes, a UD message fits in one MTU.
func CheckSize(o Op, t Transport, size, mtu int) error {
	switch {
	case size < 1:
		return fmt.Errorf("size %d: want at least 1 byte", size)
	case o.Atomic() && size != AtomicSize:
		return fmt.Errorf("size %d: %v moves exactly %d bytes (RDMABENCH_SIZES=8)", size, o, AtomicSize)
	case t == UD && mtu > 0 && size > mtu:
		return fmt.Errorf("size %d: a UD message must fit in one MTU (%d bytes); sizes above it are left out of RDMABENCH_SIZES=all", size, mtu)
	}
	return nil
}

func joinNames[T fmt.Stringer](v []T) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = x.String()
	}
	return strings.Join(s, ", ")
}
