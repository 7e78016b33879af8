package perftestcmp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/spec"
)

// A Tool is one row of the comparison: a perftest latency test and the
// rdmabench benchmark that measures the same thing. Adding perftest's
// other latency tests is adding rows here.
type Tool struct {
	name     string   // -tools key
	perftest string   // the perftest program
	ptArgs   []string // its options beyond -d -x -n -p -F (same for server and client)
	bench    string   // benchmark name without "Benchmark"
	parts    []string // sub-benchmark name parts besides /size=N, e.g. "/op=fetch_add"
	env      []string // the benchmark's environment beyond the device settings
	// halved: perftest reports half the round trip (write, send); read
	// and atomic report the whole operation, and so must the benchmark.
	halved bool
	inline bool // -I applies (perftest has no inline for read and atomic)
	// size is the one message size the test takes (atomics: 8 bytes,
	// perftest refuses -s); 0 means every -sizes size.
	size int
	// ud: a message must fit in one MTU; both sides refuse larger sizes.
	ud bool
	// op and tr pick perftest's default inline size for the row
	// (spec.DefaultInline) when -inline is left to the device.
	op spec.Op
	tr spec.Transport
}

// tools are the known rows, in the order -tools all runs them. Debian's
// perftest 4.5+0.17 (the VM's) has no --write_with_imm: -tools all then
// leaves the write-imm row out with a note (dropUnsupported).
var tools = []*Tool{
	{name: "write", perftest: "ib_write_lat", bench: "RDMAWrite", halved: true, inline: true, op: spec.Write, tr: spec.RC},
	{name: "read", perftest: "ib_read_lat", bench: "RDMARead", op: spec.Read, tr: spec.RC},
	{name: "send", perftest: "ib_send_lat", ptArgs: []string{"-c", "RC"}, bench: "RDMASend", env: []string{env.VarTransport + "=rc"}, halved: true, inline: true, op: spec.Send, tr: spec.RC},
	{name: "send-ud", perftest: "ib_send_lat", ptArgs: []string{"-c", "UD"}, bench: "RDMASend", env: []string{env.VarTransport + "=ud"}, halved: true, inline: true, ud: true, op: spec.Send, tr: spec.UD},
	{name: "atomic", perftest: "ib_atomic_lat", ptArgs: []string{"-A", "FETCH_AND_ADD"}, bench: "RDMAAtomic", parts: []string{"/op=fetch_add"}, size: 8, op: spec.FetchAdd, tr: spec.RC},
	{name: "write-imm", perftest: "ib_write_lat", ptArgs: []string{"--write_with_imm"}, bench: "RDMAWriteImm", halved: true, inline: true, op: spec.WriteImm, tr: spec.RC},
}

// label names the row: "ib_send_lat -c UD vs BenchmarkRDMASend (RDMABENCH_TRANSPORT=ud)".
func (t *Tool) label() string {
	s := strings.Join(append([]string{t.perftest}, t.ptArgs...), " ") + " vs Benchmark" + t.bench + strings.Join(t.parts, "")
	if len(t.env) > 0 {
		s += " (" + strings.Join(t.env, " ") + ")"
	}
	return s
}

// latencyKind says what the figures are.
func (t *Tool) latencyKind() string {
	if t.halved {
		return "one-way latency (half a round trip, as perftest reports it)"
	}
	return "latency of the whole operation (not halved, as perftest reports it)"
}

// sizesFor returns the sizes t runs: its fixed size, or all of sizes.
func (t *Tool) sizesFor(sizes []int) []int {
	if t.size > 0 {
		return []int{t.size}
	}
	return sizes
}

// longOptions returns t's perftest options that a perftest may lack, such
// as --write_with_imm, without their dashes.
func (t *Tool) longOptions() []string {
	var out []string
	for _, a := range t.ptArgs {
		if strings.HasPrefix(a, "--") {
			out = append(out, strings.TrimPrefix(a, "--"))
		}
	}
	return out
}

// ParseTools reads -tools: a comma-separated list of names, or "all".
func ParseTools(s string) ([]*Tool, error) {
	if strings.TrimSpace(s) == "all" {
		return tools, nil
	}
	var out []*Tool
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		i := slices.IndexFunc(tools, func(t *Tool) bool { return t.name == f })
		if i < 0 {
			return nil, fmt.Errorf("%q is not a tool; want a list of %s, or all", f, ToolNames())
		}
		if !slices.Contains(out, tools[i]) {
			out = append(out, tools[i])
		}
	}
	return out, nil
}

// ToolNames lists the tools -tools takes, comma-separated.
func ToolNames() string {
	var n []string
	for _, t := range tools {
		n = append(n, t.name)
	}
	return strings.Join(n, ", ")
}

// tag prefixes a raw output file's size part: "" for write (the names
// stay as they were), "read-" for the others.
func (t *Tool) tag() string {
	if t.name == "write" {
		return ""
	}
	return t.name + "-"
}

// Name is the tool's -tools key: "write", "send-ud".
func (t *Tool) Name() string { return t.name }

// InlineDefault as Config.Inline gives each row perftest's own default
// inline size for the device (spec.DefaultInline by
// Config.InlineFamily), passed to both sides.
const InlineDefault = -1

// inlineFor returns the inline size both sides of row t are given.
func (c *Config) inlineFor(t *Tool) int {
	if c.Inline >= 0 {
		return c.Inline
	}
	return spec.DefaultInline(c.InlineFamily, t.op, t.tr)
}
