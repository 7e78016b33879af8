package abtest

import "github.com/rdmabench/rdmabench/internal/sticky"

// The gate over time (Verdict) and the work rule (WorkVerdict) print
// their lines the same way: a tag per finding, the keys one side lacks,
// and a last line with the outcome.

// findingTag is a finding's line prefix: FAIL where it regressed, ??
// where it could not be judged, ok otherwise.
func findingTag(regressed, judged bool) string {
	switch {
	case regressed:
		return "FAIL"
	case !judged:
		return "??  "
	}
	return "ok  "
}

// printOutcome writes the keys only one side has and the verdict's last
// line, "NAME: FAIL: ...", "NAME: UNDECIDED: err" (err undecided: more
// runs would tell), "NAME: CANNOT JUDGE: err" or "NAME: pass: ...".
func printOutcome(p *sticky.Printer, name string, missing []Key, regressed, findings int, err error, undecided bool) {
	for _, k := range missing {
		p.Printf("     %s %s: on one side only: not compared, and not counted in the verdict\n", k.Name, k.Unit)
	}
	switch {
	case regressed > 0:
		p.Printf("%s: FAIL: %d of %d metrics regressed\n", name, regressed, findings)
	case err != nil && undecided:
		p.Printf("%s: UNDECIDED: %v\n", name, err)
	case err != nil:
		p.Printf("%s: CANNOT JUDGE: %v\n", name, err)
	default:
		p.Printf("%s: pass: no metric of %d regressed\n", name, findings)
	}
}
