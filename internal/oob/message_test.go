package oob_test

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rdmabench/rdmabench/internal/oob"
	"github.com/rdmabench/rdmabench/internal/spec"
)

// unhex decodes hex written with spaces, newlines and // comments.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	var clean strings.Builder
	for line := range strings.SplitSeq(s, "\n") {
		line, _, _ = strings.Cut(line, "//")
		clean.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(clean.String())
	require.NoError(t, err)
	return b
}

const goldenHello = `
	01                            // type: Hello
	00                            // reserved
	00 1b                         // payload length: 27 = 9 + 2 + 2 + 14
	52 44 4d 41 42 45 4e 43 48    // magic "RDMABENCH"
	00 01                         // version 1 (Hello's layout is frozen: any version reads it)
	00 0e                         // software length 14
	72 64 6d 61 62 65 6e 63 68 20 // "rdmabench "
	74 65 73 74                   // "test"
`

const goldenParams = `
	02                            // type: Params
	00                            // reserved
	00 29                         // payload length: 41 = 1+1+4+4+4+4+8+1+1+4+1+2+2+4
	01                            // op: write
	01                            // transport: RC
	00 01 00 00                   // size 65536
	00 00 04 00                   // mtu 1024
	ff ff ff ff                   // inline -1: the peer's device limit
	ff ff ff ff                   // gid index -1
	00 00 00 02 54 0b e4 00       // idle timeout 10 s = 10 000 000 000 ns = 0x2_540b_e400
	01                            // flags: events
	60                            // traffic class 96 (DSCP 24)
	00 01 e2 40                   // flow label 123456 = 0x1_e240
	03                            // service level 3
	00 02                         // P_Key index 2
	00 04 72 78 65 31             // device "rxe1" (version 6)
`

var goldenParamsValue = oob.Params{Op: spec.Write, Transport: spec.RC, Size: 65536,
	MTU: 1024, Inline: -1, GIDIndex: -1, IdleTimeout: 10 * time.Second, Flags: oob.FlagEvents,
	QoS: spec.QoS{TrafficClass: 96, FlowLabel: 123456, SL: 3, PKeyIndex: 2}, Device: "rxe1"}

// goldenLoadParams asks for a load stream's target: 64 KiB RDMA WRITEs
// over RC, flags bit 5 (FlagLoad), every other field its default.
const goldenLoadParams = `
	02                            // type: Params
	00                            // reserved
	00 29                         // payload length: 41, as goldenParams (device "rxe0" is 4 bytes too)
	01                            // op: write
	01                            // transport: RC
	00 01 00 00                   // size 65536
	00 00 00 00                   // mtu 0: the port's active MTU
	00 00 00 00                   // inline 0: never
	ff ff ff ff                   // gid index -1
	00 00 00 00 00 00 00 00       // idle timeout 0: the peer's default
	20                            // flags: load (bit 5)
	00                            // traffic class 0
	00 00 00 00                   // flow label 0
	00                            // service level 0
	00 00                         // P_Key index 0
	00 04 72 78 65 30             // device "rxe0"
`

var goldenLoadParamsValue = oob.Params{Op: spec.Write, Transport: spec.RC, Size: 65536, GIDIndex: -1, Flags: oob.FlagLoad, Device: "rxe0"}

const goldenRun = `
	07                            // type: Run
	00                            // reserved
	00 08                         // payload length: 8 = 4+4
	00 00 00 03                   // seq 3
	00 00 10 00                   // size 4096
`

const goldenDone = `
	05                            // type: Done
	00                            // reserved
	00 08                         // payload length: 8
	00 00 00 00 00 0f 42 40       // round trips 1 000 000 = 0xf_4240
`

const goldenCompletion = `
	06                            // type: Error
	00                            // reserved
	00 13                         // payload length: 19 = 2 + 2+6 + 4+4+1
	00 09                         // code 9: completion (version 6)
	00 06 72 78 65 30 3a 20       // msg "rxe0: "
	00 00 00 01                   // wc_status 1: IBV_WC_LOC_LEN_ERR
	00 00 00 81                   // vendor_err 0x81
	01                            // queue 1: the receive queue
`

var goldenCompletionValue = oob.Error{Code: oob.CodeCompletion, Msg: "rxe0: ", WCStatus: 1, VendorErr: 0x81, RecvQueue: true}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  oob.Message
		hex  string
	}{
		{"Hello", oob.Hello{Version: 1, Software: "rdmabench test"}, goldenHello},
		{"Params", goldenParamsValue, goldenParams},
		{"Params/load", goldenLoadParamsValue, goldenLoadParams},
		{"Run", oob.Run{Seq: 3, Size: 4096}, goldenRun},
		{"Done", oob.Done{RoundTrips: 1e6}, goldenDone},
		{"Error/completion", goldenCompletionValue, goldenCompletion},
		// Any other code: code and msg only, the layout every version reads.
		{"Error/frozen", oob.Error{Code: oob.CodeParams, Msg: "rxe0: "}, "06 00 00 0a  00 04  00 06 72 78 65 30 3a 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.hex)
			got, err := oob.Marshal(tc.msg)
			require.NoError(t, err)
			assert.Equal(t, hex.EncodeToString(want), hex.EncodeToString(got))
			m, err := oob.Decode(want)
			require.NoError(t, err)
			assert.Equal(t, tc.msg, m)
		})
	}
}

// allMessages holds one of each message, with edge values.
func allMessages() map[string]oob.Message {
	gid := [16]byte{0: 0xfe, 1: 0x80, 15: 0x01}
	return map[string]oob.Message{
		"Hello":        oob.Hello{Version: oob.Version, Software: "rdmabench v0.1.0 go1.26.8"},
		"Hello/empty":  oob.Hello{},
		"Hello/maxstr": oob.Hello{Version: 0xffff, Software: strings.Repeat("é", oob.MaxString/2)},
		"Params":       goldenParamsValue,
		"Params/zero":  oob.Params{},
		"Params/max": oob.Params{Op: 255, Transport: 255, Size: ^uint32(0), MTU: ^uint32(0), Inline: -1 << 31, GIDIndex: -1 << 31, IdleTimeout: -1,
			QoS: spec.QoS{TrafficClass: 255, FlowLabel: ^uint32(0), SL: 255, PKeyIndex: ^uint16(0)}, Device: strings.Repeat("d", oob.MaxString)},
		"Endpoint":       oob.Endpoint{Device: "rxe0", Firmware: "", LinkLayer: "Ethernet", Port: 1, LID: 0, QPN: 0x11, PSN: 0xabcdef, QKey: 0x11111111, GID: gid, GIDIndex: 1, MTU: 1024, RKey: 0x1234, Addr: 0x7f00_dead_beef, Size: 4096},
		"Endpoint/IB":    oob.Endpoint{Device: "mlx5_0", Firmware: "20.31.1014", LinkLayer: "InfiniBand", Port: 2, LID: 0xbeef, QPN: 0xffffff, GIDIndex: -1, MTU: 4096},
		"Endpoint/large": oob.Endpoint{Device: strings.Repeat("d", oob.MaxString), Firmware: strings.Repeat("f", oob.MaxString), LinkLayer: strings.Repeat("l", oob.MaxString)},
		"Run":            oob.Run{Seq: 1, Size: 2},
		"Run/max":        oob.Run{Seq: ^uint32(0), Size: ^uint32(0)},
		"Barrier":        oob.Barrier{Seq: 7},
		"Done":           oob.Done{RoundTrips: 1e9},
		"Error":          oob.Error{Code: oob.CodeParams, Msg: "size 0: must be 1..8388608 bytes"},
		"Error/empty":    oob.Error{},
		"Error/wc":       goldenCompletionValue,
		"Error/wc/send":  oob.Error{Code: oob.CodeCompletion, WCStatus: ^uint32(0), VendorErr: ^uint32(0)},
		"Endpoint/v3":    oob.Endpoint{Device: "rxe1", CMAddr: "192.168.77.1:4711", CMCookie: 0xfeedface_cafebeef, CPU: -1, Sessions: 3},
		"Challenge":      oob.Challenge{Nonce: [oob.NonceSize]byte{0: 1, 31: 0xff}, Flags: oob.ChallengeToken},
		"Auth":           oob.Auth{MAC: [oob.NonceSize]byte{5: 9}, Addr: "[fe80::1]:18515"},
	}
}

func TestRoundTrip(t *testing.T) {
	for name, m := range allMessages() {
		t.Run(name, func(t *testing.T) {
			b, err := oob.Marshal(m)
			require.NoError(t, err)
			assert.Equal(t, m.Type(), oob.Type(b[0]))
			assert.LessOrEqual(t, len(b), oob.HeaderSize+oob.MaxPayload)
			got, err := oob.Decode(b)
			require.NoError(t, err)
			assert.Equal(t, m, got)

			// Append appends, leaving what was there.
			b2, err := oob.Append([]byte("xy"), m)
			require.NoError(t, err)
			assert.Equal(t, append([]byte("xy"), b...), b2)
		})
	}
}

func TestMarshalRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  oob.Message
		want string
	}{
		{"nil", nil, "oob: cannot encode a nil Message"},
		{"long string", oob.Hello{Software: strings.Repeat("x", oob.MaxString+1)}, "oob: Hello software is 1025 bytes, over the 1024-byte bound"},
		{"not UTF-8", oob.Endpoint{Device: "rxe\xff"}, `oob: Endpoint device is not valid UTF-8: "rxe\xff"`},
		{"completion fields", oob.Error{Code: oob.CodeInternal, WCStatus: 1}, "oob: Error with code 1 carries completion fields, which only code 9 (CodeCompletion) may"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := oob.Append([]byte("keep"), tc.msg)
			assert.EqualError(t, err, tc.want)
			assert.Equal(t, "keep", string(b))
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	hello := unhex(t, goldenHello)
	longMsg := append(unhex(t, "06 00 04 05  00 01  04 01"), strings.Repeat("x", oob.MaxString+1)...)
	for _, tc := range []struct {
		name  string
		frame []byte
		want  string
	}{
		{"empty", nil, "truncated header (0 of 4 bytes)"},
		{"truncated header", unhex(t, "01 00 00"), "truncated header (3 of 4 bytes)"},
		{"truncated payload", hello[:len(hello)-1], "truncated Hello payload (26 of 27 bytes)"},
		{"length over bound", unhex(t, "05 00 10 01"), "Done payload length 4097 is over the 4096-byte bound"},
		{"unknown type", unhex(t, "0a 00 00 00"), "unknown message type 0x0a"},
		{"type zero", unhex(t, "00 00 00 00"), "unknown message type 0x00"},
		{"HTTP", []byte("HTTP/1.1 400 Bad Request\r\n\r\n"), "unknown message type 0x48"},
		{"reserved byte", unhex(t, "04 01 00 04 00 00 00 01"), "reserved header byte is 0x01, not 0"},
		{"trailing frame bytes", unhex(t, "04 00 00 04 00 00 00 01 ff"), "1 trailing bytes after the 8-byte Barrier frame"},
		{"trailing payload bytes", unhex(t, "04 00 00 05 00 00 00 01 ff"), "Barrier payload has 1 trailing bytes"},
		{"short payload", unhex(t, "04 00 00 03 00 00 01"), "Barrier payload ends inside seq (3 bytes left, 4 needed)"},
		{"empty payload", unhex(t, "05 00 00 00"), "Done payload ends inside round_trips (0 bytes left, 8 needed)"},
		{"short Run", unhex(t, "07 00 00 04 00 00 00 01"), "Run payload ends inside size (0 bytes left, 4 needed)"},
		{"string over bound", longMsg, "Error msg is 1025 bytes, over the 1024-byte bound"},
		{"string past payload", unhex(t, "06 00 00 06  00 01  00 0a 68 69"), "Error payload ends inside msg (2 bytes left, 10 needed)"},
		{"string not UTF-8", unhex(t, "06 00 00 05  00 01  00 01 ff"), `Error msg is not valid UTF-8: "\xff"`},
		{"completion queue 2", unhex(t, "06 00 00 0d  00 09  00 00  00 00 00 01  00 00 00 00  02"), "Error queue is 2, not 0 (send) or 1 (receive)"},
		{"completion cut", unhex(t, "06 00 00 08  00 09  00 00  00 00 00 01"), "Error payload ends inside vendor_err (0 bytes left, 4 needed)"},
		{"fields after a frozen code", unhex(t, "06 00 00 0d  00 01  00 00  00 00 00 01  00 00 00 00  01"), "Error payload has 9 trailing bytes"},
		{"bad magic", append([]byte{1, 0, 0, 27}, append([]byte("RDMABENCX"), hello[13:]...)...), `Hello magic is "RDMABENCX", not "RDMABENCH"`},
		{"short magic", unhex(t, "01 00 00 02 52 44"), "Hello payload ends inside magic (2 bytes left, 9 needed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := oob.Decode(tc.frame)
			assert.Nil(t, m)
			require.ErrorIs(t, err, oob.ErrMalformed)
			assert.EqualError(t, err, "oob: malformed message: "+tc.want)
		})
	}
}

func TestErrorMessage(t *testing.T) {
	e := &oob.Error{Code: oob.CodeParams, Msg: "size too large"}
	assert.EqualError(t, e, "peer: size too large")
	assert.ErrorIs(t, e, oob.ErrInvalidParams)
	assert.NotErrorIs(t, e, oob.ErrVersion)
	assert.ErrorIs(t, &oob.Error{Code: oob.CodeVersion}, oob.ErrVersion)
	assert.ErrorIs(t, &oob.Error{Code: oob.CodeProtocol}, oob.ErrProtocol)
	assert.ErrorIs(t, &oob.Error{Code: oob.CodeBusy}, oob.ErrBusy)
	assert.NotErrorIs(t, &oob.Error{Code: oob.CodeInternal}, oob.ErrBusy)
}

func TestStrings(t *testing.T) {
	assert.Equal(t, "Endpoint", oob.TypeEndpoint.String())
	assert.Equal(t, "Run", oob.TypeRun.String())
	assert.Equal(t, "Type(0x48)", oob.Type('H').String())
}
