package oob

import (
	"fmt"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/spec"
)

// Limits bound what a client may ask of a peer. A zero field means the
// DefaultLimits value.
type Limits struct {
	MaxSize uint32 // bytes per message (Params.Size, Run.Size)
	// MaxRoundTrips bounds one Run, warm-up included: the peer stops
	// answering there and reports an Error. Validate does not check it:
	// a Run's length is known only when it ends.
	MaxRoundTrips  uint64
	MaxInline      uint32        // inline data requested
	MaxGIDIndex    int32         // highest GID table index
	MaxIdleTimeout time.Duration // IdleTimeout
}

// DefaultLimits is what rdmapeer accepts unless told otherwise. MaxSize is
// perftest's largest -a size; MaxRoundTrips is 1e9, some 20 minutes at
// 1 us a round trip; MaxIdleTimeout bounds how long a stalled client can
// keep the peer's CPU busy-polling.
var DefaultLimits = Limits{
	MaxSize:        8 << 20,
	MaxRoundTrips:  1e9,
	MaxInline:      4096,
	MaxGIDIndex:    1023,
	MaxIdleTimeout: 30 * time.Second,
}

// WithDefaults returns l with every zero field set to its DefaultLimits
// value.
func (l Limits) WithDefaults() Limits { return l.withDefaults() }

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxSize == 0 {
		l.MaxSize = d.MaxSize
	}
	if l.MaxRoundTrips == 0 {
		l.MaxRoundTrips = d.MaxRoundTrips
	}
	if l.MaxInline == 0 {
		l.MaxInline = d.MaxInline
	}
	if l.MaxGIDIndex == 0 {
		l.MaxGIDIndex = d.MaxGIDIndex
	}
	if l.MaxIdleTimeout == 0 {
		l.MaxIdleTimeout = d.MaxIdleTimeout
	}
	return l
}

// maxDeviceName is the longest device name a client may send: the
// kernel's IB_DEVICE_NAME_MAX is 64 bytes with its NUL.
const maxDeviceName = 63

// deviceName reports whether d can name a device ("" for the peer's
// first): a name goes into the peer's log and its refusal.
func deviceName(d string) bool {
	return len(d) <= maxDeviceName && !strings.ContainsFunc(d, func(r rune) bool {
		return r <= ' ' || r == '/' || r >= 0x7f
	})
}

// Validate reports every way p falls outside limits or makes no sense
// (an operation the transport cannot carry, an atomic that is not 8 bytes,
// an MTU that is not a power of two from 256 to 4096). The error matches
// ErrInvalidParams and lists all problems.
func (p Params) Validate(limits Limits) error {
	l := limits.withDefaults()
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }

	switch {
	case !p.Op.Valid() || !p.Transport.Valid():
		if !p.Op.Valid() {
			add("unknown op %d", uint8(p.Op))
		}
		if !p.Transport.Valid() {
			add("unknown transport %d", uint8(p.Transport))
		}
	default:
		if err := p.Transport.Carries(p.Op); err != nil {
			add("%v", err)
		}
	}
	switch {
	case p.Size == 0:
		add("size 0: must be 1..%d bytes", l.MaxSize)
	case p.Op.Atomic() && p.Size != spec.AtomicSize:
		add("size %d: atomic ops move exactly %d bytes", p.Size, spec.AtomicSize)
	case p.Size > l.MaxSize:
		add("size %d: over the peer's limit of %d bytes", p.Size, l.MaxSize)
	}
	switch p.MTU {
	case 0, 256, 512, 1024, 2048, 4096:
	default:
		add("mtu %d: must be 0 (the port's active MTU), 256, 512, 1024, 2048 or 4096", p.MTU)
	}
	if p.Transport == spec.UD && p.MTU != 0 && p.Size > p.MTU {
		add("size %d: a UD message must fit in one MTU (%d bytes)", p.Size, p.MTU)
	}
	if p.Inline < -2 {
		add("inline %d: must be -2 (perftest's default for the operation), -1 (the peer's device limit), 0 (never) or up to %d bytes", p.Inline, l.MaxInline)
	} else if p.Inline > 0 && uint32(p.Inline) > l.MaxInline {
		add("inline %d: over the peer's limit of %d bytes", p.Inline, l.MaxInline)
	}
	if p.GIDIndex < -1 || p.GIDIndex > l.MaxGIDIndex {
		add("gid index %d: must be -1 (peer's choice) or 0..%d", p.GIDIndex, l.MaxGIDIndex)
	}
	if p.IdleTimeout < 0 || p.IdleTimeout > l.MaxIdleTimeout {
		add("idle timeout %v: must be 0 (peer's default) up to %v", p.IdleTimeout, l.MaxIdleTimeout)
	}
	if p.Flags&^knownFlags != 0 {
		add("flags %#x: unknown bits %#x", uint8(p.Flags), uint8(p.Flags&^knownFlags))
	}
	if p.Flags&FlagEvents != 0 && !p.Op.Events() {
		add("events with %v: perftest has no events mode for plain RDMA WRITE (its receiver polls memory)", p.Op)
	}
	if err := p.QoS.Validate(); err != nil {
		add("%v", err)
	}
	if p.Flags&FlagCM != 0 && (p.QoS.FlowLabel != 0 || p.QoS.SL != 0 || p.QoS.PKeyIndex != 0) {
		add("rdma_cm with a flow label, service level or P_Key index: rdma_cm takes those from its route; only the traffic class applies")
	}
	if p.Flags&FlagLoad != 0 && (p.Op != spec.Write || p.Transport != spec.RC || p.Flags&(FlagEvents|FlagCM) != 0) {
		add("load stream with %v over %v (flags %#x): a load stream is RDMA WRITEs over rc, without events or rdma_cm", p.Op, p.Transport, uint8(p.Flags))
	}
	if !deviceName(p.Device) {
		add("device %q: not a device name (up to %d printable characters, no spaces or '/'; empty for the peer's first device)", p.Device, maxDeviceName)
	}
	if p.Flags&FlagCM != 0 && p.Transport == spec.UC {
		add("rdma_cm over uc: librdmacm connects RC and UD queue pairs only (perftest -R refuses UC too)")
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalidParams, strings.Join(bad, "; "))
}
