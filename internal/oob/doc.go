// Package oob is the out-of-band TCP protocol between an rdmabench client (the
// benchmark, on node A) and rdmapeer (the server, on node B).
//
// rdmapeer takes no benchmark options: the client sends every parameter of a
// session, so the two sides can never disagree about size, operation,
// transport or iteration count (perftest needs the same options on both
// sides and only checks them since 2025). The one exception is what belongs
// to the peer's node: its devices, port and GID, given to rdmapeer itself
// (the client only picks one of the devices it serves: Params.device).
// The package only moves and checks
// messages; the RDMA work is done elsewhere. It is pure Go and is tested over
// 127.0.0.1.
//
// # Framing
//
// Every message is one frame: a 4-byte header, then the payload.
//
//	offset size field
//	0      1    type     (1 Hello, 2 Params, 3 Endpoint, 4 Barrier, 5 Done, 6 Error, 7 Run,
//	                     8 Challenge, 9 Auth)
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
//	Challenge nonce [32]byte, flags uint8 (bit 0: the peer requires a token)
//	Auth     mac [32]byte: HMAC-SHA256(token, "rdmabench oob auth v4\x00" || nonce || addr),
//	         all zeros when the Challenge asks for no token; addr string: the
//	         address the client is connected to, ip:port (SessionAddr)
//	Params   op uint8, transport uint8, size uint32, mtu uint32, inline int32,
//	         gid_index int32, idle_timeout int64 (nanoseconds), flags uint8,
//	         tclass uint8, flow_label uint32, sl uint8, pkey_index uint16,
//	         device string
//	Endpoint device string, firmware string, link_layer string, port uint8,
//	         lid uint16, qpn uint32, psn uint32, qkey uint32, gid [16]byte,
//	         gid_index int32, mtu uint32, rkey uint32, addr uint64, size uint32,
//	         cm_addr string, cm_cookie uint64, cpu int32, sessions uint16
//	Run      seq uint32, size uint32
//	Barrier  seq uint32
//	Done     round_trips uint64
//	Error    code uint16, msg string; with code 9 (completion) only, then
//	         wc_status uint32, vendor_err uint32, queue uint8 (0 send, 1 receive)
//
// The frame header and the layouts of Hello and Error are frozen: every
// version of the protocol reads them the same way, so two different versions
// can always tell each other what they are. (Error's fields after msg come
// only with code 9, which a side sends only once the handshake agreed on
// a version of 6 or later; every other Error is code and msg alone.) Version is the protocol version
// this package speaks; it changes whenever any other layout or the sequence
// below changes.
//
// Op values (internal/spec): 1 write, 2 read, 3 send, 4 write_imm,
// 5 fetch_add, 6 compare_swap, 7 send_imm. Transport values: 1 RC, 2 UC,
// 3 UD. Flags: bit 0 events (both sides wait on completion channels,
// perftest -e), bit 1 rdma_cm (the queue pairs connect through the RDMA
// connection manager, perftest -R: the peer's Endpoint names its listener
// in cm_addr, the client connects to it before sending its own Endpoint;
// the QP numbers and PSNs in both Endpoints are then for the record), bit 2
// huge pages, bit 3 on-demand paging, bit 4 transparent huge pages (both
// sides' buffers), bit 5 load (a load stream's target, below); a peer
// refuses bits it does not know with CodeParams. Params.size is the
// largest message of the session (the peer registers twice that: a send and
// a receive half); inline is the largest message sent inline, 0 for never,
// -1 for the peer's device limit, -2 for perftest's default for the
// operation (at most the device's limit); gid_index -1 lets the peer pick its own
// GID. An Endpoint describes one side's queue pair and the buffer the other
// side may access (addr, rkey, size); mtu is the active path MTU in bytes.
// Version 2 added Params.flags, Endpoint.cm_addr and op 7. Version 3 added
// Challenge and Auth, and Endpoint.cm_cookie (the peer's random value that
// the client's rdma_cm request must carry), cpu (the peer's answering CPU,
// -1 unpinned) and sessions (the other sessions the peer served when this
// one opened); a client sends -1 and 0 for the last two. Version 4 added
// Auth.addr and binds the MAC to it: the peer refuses an answer made for
// an address other than its own end of the connection, so a fake peer
// cannot relay a client's answer (a client behind address translation to
// the peer cannot use a token). Version 5 added Params.tclass, flow_label,
// sl and pkey_index (the queue pairs' traffic class, GRH flow label of 20
// bits, service level 0..15 and P_Key table index; with rdma_cm only
// tclass may be set). Version 6 added Params.device: the peer's device for
// the session, one of those the peer serves (rdmapeer -device rxe0,rxe1),
// empty for its first; a peer refuses any other with CodeParams, naming
// the devices it serves. A client with several rails sends one session per
// rail, each naming its device. Version 6 also added Error code 9,
// completion: an error work completion on the sender's side, with the
// completion's ibv_wc_status, vendor_err and queue, so that the client's
// error matches the status as a local one would (rdmalat makes it a
// *verbs.Error); its msg says the device and what the status blames.
// Error codes: 1 internal, 2 protocol, 3 version, 4 params, 5 resource,
// 6 timeout, 7 busy, 8 auth (the client's token is missing or wrong),
// 9 completion.
//
// # Sequence
//
//	client                          rdmapeer
//	Hello          ---------->
//	               <----------      Hello (always its own, even on a mismatch)
//	   both sides compare versions; on a mismatch both report ErrVersion, naming
//	   the older side as the one to upgrade, and close
//	               <----------      Challenge{nonce, flags}
//	Auth{mac,addr} ---------->      checked in constant time against the peer's
//	                                token, if it has one, and addr against its own
//	                                address: Error (CodeAuth) if either is wrong
//	   Hello to the first Params: one deadline from the accept (AcceptWithin)
//	Params         ---------->      checked against the peer's Limits
//	               <----------      Endpoint, or Error (CodeParams, CodeBusy, ...)
//	   the client moves its queue pair to RTR and RTS
//	Endpoint       ---------->      (or Error if the client cannot use the peer's)
//	               <----------      Barrier{0}: the peer's queue pair is connected
//	   then, once per run (a size, a -count repetition):
//	Run{seq,size}  ---------->      the peer zeroes its receive half and starts
//	                                its loop, answering round trips of size bytes
//	               <----------      Barrier{seq}: it waits for the first one
//	   the RDMA loop runs; no messages are expected, both sides Watch the socket
//	Done{n}        ---------->      n: round trips the client ran, warm-up included
//	               <----------      Done{m}: round trips the peer answered (m == n)
//	   the client sends the next Run, or new Params (a new session on the same
//	   connection), or closes the connection: the peer frees the session
//
// A load session (Params.flags bit 5, write over RC only, on a connection
// of its own beside the measuring one) is the target of a bandwidth stream
// the client runs while it measures latency on its other session: the
// peer's Endpoint is a buffer the client's queue pair writes into, and
// nothing on the peer answers or polls. The peer pins no CPU for it (a
// connection whose first Params are a load session may open only load
// sessions), counts it against its sessions and registered memory like
// any other, and waits for the client's next request for at most
// rdmapeer -idle: each Run{seq,size} renews it and is answered with
// Barrier{seq} at once, with no Done. The client's Done{n} says the
// stream stopped after n bytes written; the peer answers Done{0}.
//
// A session is one pair of connected queue pairs and one registered buffer
// on each side; a benchmark runs all its sizes and repetitions as Runs of one
// session. Run seq counts from 1 in each session. A Run's size must not
// exceed the session's Params.size; the peer stops answering after
// Limits.MaxRoundTrips round trips of one Run and sends an Error.
//
// Either side may send an Error instead of any message, and during the RDMA
// loop; the receiver returns it as an *Error whose text is "peer: " followed
// by the sender's message. A peer at its limit of sessions or of registered
// memory answers Params with an Error of CodeBusy (ErrBusy).
// Every send and every receive has a deadline (Conn.Timeout, DefaultTimeout
// by default), so no step can block for longer. The one exception is the
// RDMA loop: there Conn.Watch blocks on the socket with no deadline and
// reports at once when the peer's kernel closes the connection (the peer
// process died) or the peer sends an Error; each side then stops its own
// loop. A peer process that stalls without closing is caught by the RDMA
// loop's own idle timeout (Params.IdleTimeout), and a peer host that
// vanishes without closing by TCP keep-alive (KeepAlive). Between runs
// rdmapeer waits for the client's next request for as long as it is
// configured to (rdmapeer -idle).
//
// The default port is DefaultPort, 18515, perftest's.
package oob
