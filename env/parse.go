package env

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ParseSizes parses a list of message sizes given as name (a variable or a
// flag, named in the error): comma-separated byte counts (suffixes K and M
// for KiB and MiB allowed), "all" for allSizes, or empty for defaultSizes.
func ParseSizes(name, v string) ([]int, error) {
	v = strings.TrimSpace(v)
	switch v {
	case "":
		return defaultSizes, nil
	case "all":
		return allSizes(), nil
	}
	var sizes []int
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		n, ok := parseByteCount(f, maxSize)
		if !ok {
			return nil, fmt.Errorf("%s=%q: %q is not a size from 1 byte to 8M (example: %s=2,4096,64K or %s=all)", name, v, f, name, name)
		}
		// A size twice would be two benchmarks of one name, which
		// benchstat takes for one with twice the runs.
		if slices.Contains(sizes, int(n)) {
			return nil, fmt.Errorf("%s=%q names %d bytes twice; list each size once (use -count for more runs)", name, v, n)
		}
		sizes = append(sizes, int(n))
	}
	return sizes, nil
}

// ParseBytes parses a byte count given as the flag name, with an optional
// K, M or G suffix (KiB, MiB, GiB), from 1 to limit.
func ParseBytes(name, v string, limit int64) (int64, error) {
	n, ok := parseByteCount(strings.TrimSpace(v), limit)
	if !ok {
		return 0, fmt.Errorf("%s %q: want a byte count such as 65536, 64K or 8M", name, v)
	}
	return n, nil
}

// parseByteCount is the one reading of "64K": a positive count with an
// optional binary suffix, at most limit.
func parseByteCount(s string, limit int64) (int64, bool) {
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult, s = 1<<10, s[:n-1]
		case 'm', 'M':
			mult, s = 1<<20, s[:n-1]
		case 'g', 'G':
			mult, s = 1<<30, s[:n-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > limit/mult {
		return 0, false
	}
	return n * mult, true
}

func parseMTU(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	switch {
	case err != nil:
	case n == 256, n == 512, n == 1024, n == 2048, n == 4096:
		return n, nil
	}
	return 0, fmt.Errorf("%s=%q is not an RDMA path MTU: use 256, 512, 1024, 2048 or 4096", VarMTU, v)
}

// minTimeout is the shortest RDMABENCH_TIMEOUT: it bounds every wait on
// the peer, a TCP connect and the out-of-band handshake included, which
// take milliseconds on a real network; a shorter one fails every run.
const minTimeout = 10 * time.Millisecond

func parseTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return defaultTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q is not a positive Go duration (example: %s=10s)", VarTimeout, v, VarTimeout)
	}
	if d < minTimeout {
		return 0, fmt.Errorf("%s=%q is under %v: it bounds every wait on the peer (a connect, the handshake), which alone take milliseconds (example: %s=10s)", VarTimeout, v, minTimeout, VarTimeout)
	}
	return d, nil
}

// MaxGap is the longest RDMABENCH_GAP: a second between round trips
// already makes a run of a few thousand samples last an hour.
const MaxGap = time.Second

// parseGap reads RDMABENCH_GAP: a duration from 0 to MaxGap, shorter
// than timeout (the responder waits out each gap within it).
func parseGap(v string, timeout time.Duration) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > MaxGap {
		return 0, fmt.Errorf("%s=%q: want the idle time before each round trip as a Go duration from 0 to %v, e.g. %s=10us", VarGap, v, MaxGap, VarGap)
	}
	if d >= timeout {
		return 0, fmt.Errorf("%s=%q is not shorter than %s (%v): the responder waits out each gap within it; shorten the gap or raise %s", VarGap, v, VarTimeout, timeout, VarTimeout)
	}
	return d, nil
}

// parseLoad reads RDMABENCH_LOAD: the load stream's message size, 0 for
// none.
func parseLoad(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "0" {
		return 0, nil
	}
	n, ok := parseByteCount(v, maxSize)
	if !ok {
		return 0, fmt.Errorf("%s=%q: want the load stream's message size from 1 byte to 8M, e.g. %s=64K (0: no load)", VarLoad, v, VarLoad)
	}
	return int(n), nil
}

// parseHugePages reads RDMABENCH_HUGEPAGES: 1 for reserved huge pages,
// thp for transparent ones, 0 for neither.
func parseHugePages(v string) (reserved, thp bool, err error) {
	switch v = strings.TrimSpace(v); v {
	case "", "0", "false":
		return false, false, nil
	case "1", "true":
		return true, false, nil
	case "thp":
		return false, true, nil
	}
	return false, false, fmt.Errorf("%s=%q: use 1 (reserved huge pages, vm.nr_hugepages), thp (transparent huge pages) or 0", VarHugePages, v)
}

// parsePMQoS reads RDMABENCH_PMQOS: "1" holds the limit at 0, a duration
// holds that limit, "" or "0" holds nothing.
func parsePMQoS(v string) (bool, time.Duration, error) {
	switch v = strings.TrimSpace(v); v {
	case "", "0":
		return false, 0, nil
	case "1":
		return true, 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return false, 0, fmt.Errorf("%s=%s: want 1 (hold the CPU wake-up latency limit at 0), a limit such as 20us, or 0 (off)", VarPMQoS, strconv.Quote(v))
	}
	if d > maxPMQoSLimit || d%time.Microsecond != 0 {
		return false, 0, fmt.Errorf("%s=%s: the kernel takes a limit in whole microseconds up to %v (/dev/cpu_dma_latency holds a 32-bit count); want a limit such as 20us, 1 for 0, or 0 (off)", VarPMQoS, strconv.Quote(v), maxPMQoSLimit)
	}
	return true, d, nil
}

// maxPMQoSLimit is the longest RDMABENCH_PMQOS limit: /dev/cpu_dma_latency
// takes a signed 32-bit count of microseconds.
const maxPMQoSLimit = time.Duration(1<<31-1) * time.Microsecond

func parseBool(getenv func(string) string, name string) (bool, error) {
	switch v := strings.TrimSpace(getenv(name)); v {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: use 1 or 0", name, v)
	}
}

func parseInt(getenv func(string) string, name string, def, lo, hi int, want string) (int, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return def, fmt.Errorf("%s=%q: want %s", name, v, want)
	}
	return n, nil
}

// parseMaxSamples reads RDMABENCH_MAX_SAMPLES: a count, 0 for none.
func parseMaxSamples(v string) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return defaultMaxSamples, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a count of samples, e.g. %s=%d (0: write none)", VarMaxSamples, v, VarMaxSamples, defaultMaxSamples)
	}
	return n, nil
}
