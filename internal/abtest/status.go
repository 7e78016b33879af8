package abtest

// Exit statuses of the commands that give a verdict (rdmaab, rdmacompare),
// one table for both and kept stable, so that a CI job tells a regression
// from a run that broke and from too little evidence.
const (
	ExitPass      = 0 // no regression (or no gate asked for)
	ExitRegressed = 1 // rdmaab's gate found a regression; rdmacompare -strict: a target missed
	ExitUsage     = 2 // bad usage, or a tool the command needs is missing
	ExitFailed    = 3 // a build or a run failed, or its results could not be read or judged
	ExitUndecided = 4 // the verdict is undecided: too few samples or pairs to decide
)

// WorstStatus combines two verdicts' statuses: a regression above all
// (it is a finding), then a failure, then undecided, then a pass.
func WorstStatus(a, b int) int {
	rank := func(s int) int {
		switch s {
		case ExitRegressed:
			return 4
		case ExitFailed, ExitUsage:
			return 3
		case ExitUndecided:
			return 2
		case ExitPass:
			return 0
		}
		return 3
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
