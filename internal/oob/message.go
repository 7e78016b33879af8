package oob

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rdmabench/rdmabench/internal/spec"
)

// Version is the protocol version this package speaks.
const Version uint16 = 6

// Limits of the framing. See the package documentation.
const (
	HeaderSize = 4    // bytes of a frame header
	MaxPayload = 4096 // largest payload a frame may carry
	MaxString  = 1024 // longest string field, in bytes
)

// Magic opens every Hello payload.
const Magic = "RDMABENCH"

// Errors that the package's errors match with errors.Is.
var (
	// ErrMalformed: a frame that does not follow the encoding.
	ErrMalformed = errors.New("oob: malformed message")
	// ErrProtocol: a well-formed message at the wrong step of the sequence.
	ErrProtocol = errors.New("oob: protocol error")
	// ErrVersion: the two sides speak different protocol versions.
	ErrVersion = errors.New("oob: protocol version mismatch")
	// ErrNotPeer: the other side does not speak this protocol at all.
	ErrNotPeer = errors.New("oob: not an rdmabench peer")
	// ErrInvalidParams: Params outside the Limits (Params.Validate, or
	// an Error with CodeParams from the peer).
	ErrInvalidParams = errors.New("oob: invalid params")
	// ErrPeerLost: the connection failed while a Watcher was watching it.
	ErrPeerLost = errors.New("oob: lost the peer")
	// ErrAddr: a peer address that is not host:port.
	ErrAddr = errors.New("oob: bad peer address")
	// ErrAuth: the peer refused the client's token (an Error with
	// CodeAuth from the peer), or the client has none for a peer that
	// requires one.
	ErrAuth = errors.New("oob: not authorized")
	// ErrBusy: the peer serves as many sessions, or holds as much
	// registered memory, as it may; try again later (an Error with
	// CodeBusy from the peer).
	ErrBusy = errors.New("oob: peer busy")
)

// Type is a message type, the first byte of a frame.
type Type uint8

// Message types.
const (
	TypeHello    Type = 1
	TypeParams   Type = 2
	TypeEndpoint Type = 3
	TypeBarrier  Type = 4
	TypeDone     Type = 5
	TypeError    Type = 6
	TypeRun      Type = 7
	// Version 3: the peer's challenge and the client's answer (auth.go);
	// version 4 binds the answer to the address the client reached.
	TypeChallenge Type = 8
	TypeAuth      Type = 9
)

func (t Type) String() string {
	switch t {
	case TypeHello:
		return "Hello"
	case TypeParams:
		return "Params"
	case TypeEndpoint:
		return "Endpoint"
	case TypeBarrier:
		return "Barrier"
	case TypeDone:
		return "Done"
	case TypeError:
		return "Error"
	case TypeRun:
		return "Run"
	case TypeChallenge:
		return "Challenge"
	case TypeAuth:
		return "Auth"
	}
	return fmt.Sprintf("Type(0x%02x)", uint8(t))
}

func (t Type) known() bool { return t >= TypeHello && t <= TypeAuth }

// Message is one of Hello, Challenge, Auth, Params, Endpoint, Run, Barrier,
// Done and Error.
type Message interface {
	Type() Type
	appendPayload(e *encoder)
	decodePayload(d *decoder) Message
}

// Hello opens a connection, both ways. Its layout never changes.
type Hello struct {
	Version  uint16
	Software string // free text, e.g. "rdmabench v0.3.0 go1.26.8"
}

// Params are the parameters of one session, sent by the client. The peer
// checks them with Validate against its Limits before it acts on them. A
// session connects one pair of queue pairs and runs any number of Runs on
// them, each of its own size and length.
type Params struct {
	Op        spec.Op
	Transport spec.Transport
	// Size is the largest message of the session in bytes: the peer
	// registers a buffer of twice this (a send half and a receive half).
	Size     uint32
	MTU      uint32 // path MTU in bytes; 0: the port's active MTU
	Inline   int32  // largest message sent inline; 0: never; -1: the peer's device limit; -2: perftest's default
	GIDIndex int32  // -1: the peer picks its own GID
	// IdleTimeout is how long a stalled RDMA loop, or a step of the
	// exchange, may wait for the other side before it fails; 0: the
	// peer's default. Sent in nanoseconds.
	IdleTimeout time.Duration
	Flags       Flags
	// QoS is the traffic class, flow label, service level and P_Key
	// index both sides' queue pairs use; zero: every default.
	QoS spec.QoS
	// Device names the peer's device for this connection's runs (a rail
	// of a node with several NICs); "": the first device the peer serves. A peer
	// refuses a device it does not serve, listing those it does.
	Device string
}

// Flags are a session's variants.
type Flags uint8

const (
	// FlagEvents: both sides wait for completions on a completion channel
	// (perftest -e) instead of busy-polling.
	FlagEvents Flags = 1 << 0
	// FlagCM: the queue pairs connect through the RDMA connection manager
	// (perftest -R); the peer names its listener in Endpoint.CMAddr.
	FlagCM Flags = 1 << 1

	// FlagHugePages: both sides' buffers are backed by huge pages.
	FlagHugePages Flags = 1 << 2
	// FlagODP: both sides' buffers are registered with on-demand paging.
	FlagODP Flags = 1 << 3
	// FlagTHP: both sides' buffers are backed by transparent huge pages.
	FlagTHP Flags = 1 << 4
	// FlagLoad: the session is the target of a load stream, not a latency
	// pair: the peer's buffer takes the client's RDMA WRITEs (op write
	// over RC only) and nothing answers them; no CPU of the peer is
	// pinned for it. Each Run only renews the session (Barrier at once),
	// and the client's Done says how many bytes it wrote.
	FlagLoad Flags = 1 << 5
	// Version 6 knows all of these (a peer of an older version refuses a
	// version-6 client by its version before any flag; a version-6 peer
	// built before a bit existed refuses it as unknown).
	knownFlags = FlagEvents | FlagCM | FlagHugePages | FlagODP | FlagTHP | FlagLoad
)

// Endpoint describes one side's queue pair, port and the buffer the other
// side may access (Addr, RKey, Size). Both sides send one.
type Endpoint struct {
	Device    string // e.g. "mlx5_0", "rxe0"
	Firmware  string
	LinkLayer string // "InfiniBand" or "Ethernet"
	Port      uint8
	LID       uint16
	QPN       uint32
	PSN       uint32
	QKey      uint32 // UD only
	GID       [16]byte
	GIDIndex  int32
	MTU       uint32 // active path MTU in bytes
	RKey      uint32
	Addr      uint64
	Size      uint32
	// CMAddr is the host:port of the peer's rdma_cm listener for this
	// session when the client asked for FlagCM; empty otherwise.
	CMAddr string
	// CMCookie, from the peer, is what the client's rdma_cm connection
	// request must carry: the listener refuses any other request.
	CMCookie uint64
	// CPU is the CPU the peer's answering thread is pinned to, -1 when
	// not pinned; Sessions the other sessions the peer served when this
	// one opened. The client's config lines report both. The client
	// sends -1 and 0.
	CPU      int32
	Sessions uint16
}

// Run asks the peer to start answering round trips of Size bytes (at most
// the session's Params.Size). Seq numbers the runs of a session from 1; the
// peer answers with Barrier{Seq} once it waits for the first round trip.
type Run struct {
	Seq  uint32
	Size uint32
}

// Barrier marks a side ready: the peer sends Barrier{0} once its queue pair
// is connected and Barrier{Seq} once it answers a Run's round trips.
type Barrier struct{ Seq uint32 }

// Done ends a Run: the client sends the round trips it ran, warm-up
// included, and the peer answers with the round trips it answered.
type Done struct{ RoundTrips uint64 }

// Code says what kind of failure an Error reports.
type Code uint16

// Error codes.
const (
	CodeInternal Code = 1 // anything else
	CodeProtocol Code = 2 // unexpected or malformed message
	CodeVersion  Code = 3 // protocol version mismatch
	CodeParams   Code = 4 // Params outside the peer's Limits
	CodeResource Code = 5 // device, queue pair or memory setup failed
	CodeTimeout  Code = 6 // the RDMA loop stalled for IdleTimeout
	CodeBusy     Code = 7 // the peer is at its session or memory limit
	CodeAuth     Code = 8 // the client's token is missing or wrong
	// CodeCompletion: an error work completion on the sender's side; the
	// Error carries its status, vendor_err and queue (version 6).
	CodeCompletion Code = 9
)

// Error is the message either side sends instead of any other when it
// fails. Received, it is returned as an *Error: its text is the peer's,
// prefixed with "peer: ", and it matches ErrProtocol, ErrVersion,
// ErrInvalidParams, ErrBusy and os.ErrDeadlineExceeded by code. The
// completion's fields are sent with CodeCompletion only, and must be zero
// with any other code; the package does not import verbs, so the client
// (rdmalat) turns them into the *verbs.Error that a local completion gives.
type Error struct {
	Code Code
	Msg  string
	// WCStatus is the completion's enum ibv_wc_status (verbs.WCStatus).
	WCStatus uint32
	// VendorErr is the completion's vendor_err, 0 for none.
	VendorErr uint32
	// RecvQueue: the completion was on the sender's receive queue (the
	// other side's message), else for a post of the sender's own.
	RecvQueue bool
}

func (e *Error) Error() string { return "peer: " + e.Msg }

// Is matches the sentinel that goes with e.Code.
func (e *Error) Is(target error) bool {
	switch e.Code {
	case CodeProtocol:
		return target == ErrProtocol
	case CodeVersion:
		return target == ErrVersion
	case CodeParams:
		return target == ErrInvalidParams
	case CodeTimeout:
		return target == os.ErrDeadlineExceeded
	case CodeBusy:
		return target == ErrBusy
	case CodeAuth:
		return target == ErrAuth
	}
	return false
}

func (Hello) Type() Type    { return TypeHello }
func (Params) Type() Type   { return TypeParams }
func (Endpoint) Type() Type { return TypeEndpoint }
func (Run) Type() Type      { return TypeRun }
func (Barrier) Type() Type  { return TypeBarrier }
func (Done) Type() Type     { return TypeDone }
func (Error) Type() Type    { return TypeError }
