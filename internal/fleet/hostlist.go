package fleet

import (
	"fmt"
	"strconv"
	"strings"
)

// maxHosts bounds what one host list may expand to, so that a typo such
// as n[1-100000000] fails instead of eating memory.
const maxHosts = 1 << 16

// ExpandHostlist expands a Slurm host list such as "n[1-4,7],login1" into
// node names, in order, the way `scontrol show hostnames` does:
// comma-separated items; in each, bracketed lists of numbers and ranges
// ("[01-10]" keeps the zero padding of the lower bound); several bracket
// groups in one item expand as a cross product, the last one fastest.
func ExpandHostlist(list string) ([]string, error) {
	list = strings.TrimSpace(list)
	if list == "" {
		return nil, fmt.Errorf("empty host list (example: n[1-4],login1)")
	}
	items, err := splitItems(list)
	if err != nil {
		return nil, err
	}
	var hosts []string
	for _, item := range items {
		names, err := expandItem(item)
		if err != nil {
			return nil, fmt.Errorf("host list %q: %w", list, err)
		}
		if len(hosts)+len(names) > maxHosts {
			return nil, fmt.Errorf("host list %q: more than %d hosts", list, maxHosts)
		}
		hosts = append(hosts, names...)
	}
	return hosts, nil
}

// splitItems splits a host list at the commas outside brackets.
func splitItems(list string) ([]string, error) {
	var items []string
	depth, start := 0, 0
	for i, c := range list {
		switch c {
		case '[':
			if depth++; depth > 1 {
				return nil, fmt.Errorf("host list %q: nested '[' at byte %d", list, i)
			}
		case ']':
			if depth--; depth < 0 {
				return nil, fmt.Errorf("host list %q: ']' without '[' at byte %d", list, i)
			}
		case ',':
			if depth == 0 {
				items = append(items, list[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("host list %q: '[' not closed", list)
	}
	items = append(items, list[start:])
	for _, it := range items {
		if strings.TrimSpace(it) == "" {
			return nil, fmt.Errorf("host list %q: empty name between commas", list)
		}
	}
	return items, nil
}

// expandItem expands one item: literal text and bracket groups.
func expandItem(item string) ([]string, error) {
	out := []string{""}
	for rest := item; rest != ""; {
		open := strings.IndexByte(rest, '[')
		if open < 0 {
			out = appendEach(out, []string{rest})
			break
		}
		if open > 0 {
			out = appendEach(out, []string{rest[:open]})
		}
		end := strings.IndexByte(rest, ']')
		nums, err := expandRanges(rest[open+1 : end])
		if err != nil {
			return nil, err
		}
		if len(out)*len(nums) > maxHosts {
			return nil, fmt.Errorf("%q: more than %d hosts", item, maxHosts)
		}
		out = appendEach(out, nums)
		rest = rest[end+1:]
	}
	for _, name := range out {
		if strings.ContainsAny(name, " \t/") {
			return nil, fmt.Errorf("%q is not a host name", name)
		}
	}
	return out, nil
}

// appendEach returns every prefix followed by every suffix.
func appendEach(prefixes, suffixes []string) []string {
	out := make([]string, 0, len(prefixes)*len(suffixes))
	for _, p := range prefixes {
		for _, s := range suffixes {
			out = append(out, p+s)
		}
	}
	return out
}

// expandRanges expands the inside of brackets: "1-4,7", "01-10".
func expandRanges(spec string) ([]string, error) {
	if spec == "" {
		return nil, fmt.Errorf("empty brackets []")
	}
	var out []string
	for r := range strings.SplitSeq(spec, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		a, errA := parseIndex(lo)
		b, errB := parseIndex(hi)
		if errA != nil || errB != nil {
			return nil, fmt.Errorf("[%s]: %q is not a number or a range like 1-4", spec, r)
		}
		if b < a {
			return nil, fmt.Errorf("[%s]: range %q runs backwards", spec, r)
		}
		if b-a >= maxHosts {
			return nil, fmt.Errorf("[%s]: range %q has more than %d hosts", spec, r, maxHosts)
		}
		width := 0
		if len(lo) > 1 && lo[0] == '0' {
			width = len(lo) // zero-padded: n[01-10] -> n01 ... n10
		}
		for i := a; i <= b; i++ {
			out = append(out, fmt.Sprintf("%0*d", width, i))
		}
	}
	return out, nil
}

func parseIndex(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(s)
}
