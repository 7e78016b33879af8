// Package oob is the out-of-band TCP protocol between an rdmabench client (the
// benchmark, on node A) and rdmapeer (the server, on node B).
//
// rdmapeer takes no benchmark options: the client sends every parameter of a
// session, so the two sides can never disagree about size, operation,
// transport or iteration count (perftest needs the same options on both
// sides and only checks them since 2025). The package only moves and checks
// messages; the RDMA work is done elsewhere. It is pure Go and is tested over
// 127.0.0.1.
//
// # Framing
//
// Every message is one frame: a 4-byte header, then the payload.
//
//	offset size field
//	0      1    type     (1 Hello, 2 Params, 3 Endpoint, 4 Barrier, 5 Done, 6 Error)
//	1      1    reserved (must be 0)
//	2      2    length   payload length in bytes, big-endian, at most MaxPayload (4096)
//	4      n    payload
//
// Payload fields are big-endian fixed-size integers, laid out in the order
// listed below with no padding. A string is a uint16 byte count followed by
// that many bytes of valid UTF-8, at most MaxString (1024) bytes. A payload
// must hold exactly its fields: a short payload, bytes left over, an unknown
// type, a non-zero reserved byte or a length over MaxPayload are errors
// (ErrMalformed), and a receiver drops the connection on them. The decoder
// never allocates more than the frame it was given.
//
// # Messages
//
//	Hello    magic [9]byte "RDMABENCH", version uint16, software string
//	Params   op uint8, transport uint8, size uint32, iterations uint64,
//	         warmup uint64, mtu uint32, inline uint32, gid_index int32,
//	         idle_timeout int64 (nanoseconds)
//	Endpoint device string, firmware string, link_layer string, port uint8,
//	         lid uint16, qpn uint32, psn uint32, qkey uint32, gid [16]byte,
//	         gid_index int32, mtu uint32, rkey uint32, addr uint64, size uint32
//	Barrier  seq uint32
//	Done     samples uint64
//	Error    code uint16, msg string
//
// The frame header and the layouts of Hello and Error are frozen: every
// version of the protocol reads them the same way, so two different versions
// can always tell each other what they are. Version is the protocol version
// this package speaks; it changes whenever any other layout or the sequence
// below changes.
//
// Op values: 1 write, 2 read, 3 send, 4 write_imm, 5 atomic_fadd,
// 6 atomic_cswap. Transport values: 1 RC, 2 UC, 3 UD. An Endpoint describes
// one side's queue pair and the buffer the other side may access (addr, rkey,
// size); mtu is the active path MTU in bytes.
//
// # Sequence
//
//	client                          rdmapeer
//	Hello          ---------->
//	               <----------      Hello (always its own, even on a mismatch)
//	   both sides compare versions; on a mismatch both report ErrVersion and close
//	Params         ---------->      checked against the peer's Limits
//	               <----------      Endpoint, or Error (code CodeParams, ...)
//	Endpoint       ---------->      (or Error if the client cannot use the peer's)
//	   both sides move their queue pairs to RTR and RTS
//	Barrier{seq}   <--------->      Barrier{seq} (each sends, then waits for the same seq)
//	   the RDMA loop runs; no messages are expected, both sides Watch the socket
//	Done{samples}  ---------->
//	               <----------      Done{samples}
//	   the client may send the next Params on the same connection, or close it
//
// Either side may send an Error instead of any message; the receiver returns
// it as an *Error whose text is "peer: " followed by the sender's message.
// Every send and every receive has a deadline (Conn.Timeout, DefaultTimeout
// by default), so no step can block for longer. The one exception is the
// RDMA loop: there Conn.Watch blocks on the socket with no deadline and
// reports at once when the peer's kernel closes the connection (the peer
// process died) or the peer sends an Error. A peer host that vanishes without
// closing is caught by TCP keep-alive (KeepAlive).
//
// The default port is DefaultPort, 18515, perftest's.
package oob
