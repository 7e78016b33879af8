// Package fleet plans and judges a latency matrix over many nodes: which
// pairs to measure in which round (all pairs in n-1 rounds of n/2 disjoint
// pairs, a sample of rounds, a file of pairs, a retest of flagged pairs),
// Slurm host lists, and the outlier rules applied to the measured pairs.
// It is pure Go: no RDMA, no Slurm, no I/O beyond the readers and writers
// it is given.
package fleet

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// A Pair is one measurement: Src runs the benchmark, Dst runs rdmapeer.
type Pair struct {
	Src, Dst string
}

func (p Pair) String() string { return p.Src + "->" + p.Dst }

// key is the pair without its direction.
func (p Pair) key() [2]string {
	if p.Src < p.Dst {
		return [2]string{p.Src, p.Dst}
	}
	return [2]string{p.Dst, p.Src}
}

// A Plan is a sequence of rounds of disjoint pairs over a set of nodes.
type Plan struct {
	Pattern string   // "all-pairs", "sample:K", "file", "retest"
	Nodes   []string // every node of the allocation, in host-list order
	Rounds  [][]Pair // no node twice in a round
}

// A Step is one pair of a plan with its place: Round counts from 1, Index
// is its position in the whole plan (ports are derived from it).
type Step struct {
	Pair
	Round, Index int
}

// Steps returns every pair of the plan in order.
func (p *Plan) Steps() []Step {
	var steps []Step
	for r, round := range p.Rounds {
		for _, pair := range round {
			steps = append(steps, Step{Pair: pair, Round: r + 1, Index: len(steps)})
		}
	}
	return steps
}

// RoundNodes returns the nodes measured in round r (from 1), in the order
// of the plan's node list.
func (p *Plan) RoundNodes(r int) []string {
	in := map[string]bool{}
	for _, pair := range p.Rounds[r-1] {
		in[pair.Src], in[pair.Dst] = true, true
	}
	return slices.DeleteFunc(slices.Clone(p.Nodes), func(n string) bool { return !in[n] })
}

// Find returns node's step in round r (from 1), or false for a bye.
func (p *Plan) Find(r int, node string) (Step, bool) {
	for _, s := range p.Steps() {
		if s.Round == r && (s.Src == node || s.Dst == node) {
			return s, true
		}
	}
	return Step{}, false
}

// checkNodes rejects node lists a plan cannot be built on.
func checkNodes(nodes []string) error {
	if len(nodes) < 2 {
		return fmt.Errorf("%d node(s) %q: a latency matrix needs at least 2 (sbatch -N 2 or more)", len(nodes), nodes)
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		if n == "" || strings.ContainsAny(n, " \t/=") {
			return fmt.Errorf("node name %q: want a host name without spaces, '/' or '='", n)
		}
		if seen[n] {
			return fmt.Errorf("node %s appears twice in the node list: list each node once", n)
		}
		seen[n] = true
	}
	return nil
}

// AllPairs returns every pair of nodes once, in n-1 rounds of n/2
// disjoint pairs (n rounds of (n-1)/2 when n is odd: each round one node
// sits out), by the circle method: the first node stays put, the others
// turn one place per round. Each node runs the benchmark in about half of
// its pairs.
func AllPairs(nodes []string) (*Plan, error) {
	if err := checkNodes(nodes); err != nil {
		return nil, err
	}
	return &Plan{Pattern: "all-pairs", Nodes: slices.Clone(nodes), Rounds: circle(nodes)}, nil
}

func circle(nodes []string) [][]Pair {
	ring := slices.Clone(nodes)
	if len(ring)%2 == 1 {
		ring = append(ring, "") // the bye
	}
	m := len(ring)
	rounds := make([][]Pair, 0, m-1)
	for r := 0; r < m-1; r++ {
		var round []Pair
		for i := 0; i < m/2; i++ {
			a, b := ring[i], ring[m-1-i]
			if a == "" || b == "" {
				continue
			}
			// Positions 1..m/2-1 run the benchmark: a node turning
			// round the ring spends about half its rounds there. The
			// fixed node alternates.
			if i == 0 && r%2 == 1 {
				a, b = b, a
			}
			round = append(round, Pair{a, b})
		}
		rounds = append(rounds, round)
		// Turn every position but the first by one.
		last := ring[m-1]
		copy(ring[2:], ring[1:m-1])
		ring[1] = last
	}
	return rounds
}

// Sample returns k rounds of an all-pairs schedule over the nodes in an
// order shuffled by seed: each node is measured k times (at most; with an
// odd count, a node may sit out a round), with partners that differ from
// round to round. The same seed gives the same plan.
func Sample(nodes []string, k int, seed uint64) (*Plan, error) {
	if err := checkNodes(nodes); err != nil {
		return nil, err
	}
	all := len(nodes) - 1
	if len(nodes)%2 == 1 {
		all = len(nodes)
	}
	if k < 1 || k > all {
		return nil, fmt.Errorf("sample:%d: want 1 to %d rounds for %d nodes (all-pairs measures every pair)", k, all, len(nodes))
	}
	shuffled := slices.Clone(nodes)
	rng := rand.New(rand.NewPCG(seed, 0x666c656574))
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	return &Plan{Pattern: "sample:" + strconv.Itoa(k), Nodes: slices.Clone(nodes), Rounds: circle(shuffled)[:k]}, nil
}

// Retest returns a plan that measures the given pairs again, in as few
// rounds as a greedy packing finds with at most perRound pairs each (0:
// no limit) and no node twice in a round. ClusterKit retests with fewer
// pairs per round, so that a slow pair is not slow only because of the
// traffic of the others.
func Retest(nodes []string, pairs []Pair, perRound int) (*Plan, error) {
	if err := checkNodes(nodes); err != nil {
		return nil, err
	}
	if len(pairs) == 0 {
		return nil, errors.New("retest: no pairs to retest")
	}
	p := &Plan{Pattern: "retest", Nodes: slices.Clone(nodes)}
	var busy []map[string]bool
	index := p.nodeIndex()
	for _, pair := range pairs {
		if err := p.checkPair(pair, index); err != nil {
			return nil, fmt.Errorf("retest: %w", err)
		}
		r := 0
		for ; r < len(p.Rounds); r++ {
			if !busy[r][pair.Src] && !busy[r][pair.Dst] && (perRound <= 0 || len(p.Rounds[r]) < perRound) {
				break
			}
		}
		if r == len(p.Rounds) {
			p.Rounds = append(p.Rounds, nil)
			busy = append(busy, map[string]bool{})
		}
		p.Rounds[r] = append(p.Rounds[r], pair)
		busy[r][pair.Src], busy[r][pair.Dst] = true, true
	}
	return p, nil
}

// nodeIndex maps each node of the plan to its place in Nodes.
func (p *Plan) nodeIndex() map[string]int {
	index := make(map[string]int, len(p.Nodes))
	for i, n := range p.Nodes {
		index[n] = i
	}
	return index
}

// checkPair checks that pair is two different nodes of the plan (index is
// p.nodeIndex(): a plan of 1000 nodes has half a million pairs).
func (p *Plan) checkPair(pair Pair, index map[string]int) error {
	for _, n := range []string{pair.Src, pair.Dst} {
		if _, ok := index[n]; !ok {
			return fmt.Errorf("pair %s %s: node %s is not in the allocation (%s)", pair.Src, pair.Dst, n, strings.Join(p.Nodes, ","))
		}
	}
	if pair.Src == pair.Dst {
		return fmt.Errorf("pair %s %s: a node cannot be measured against itself", pair.Src, pair.Dst)
	}
	return nil
}

// maxPlanLine bounds a line of a plan: "# nodes:" of 50,000 nodes fits.
const maxPlanLine = 1 << 20

// ParsePlan reads a plan file in ClusterKit's format, one pair a line:
// "<round> <node1> <node2>", node1 running the benchmark; blank lines and
// lines starting with # are skipped. Rounds are numbered from 1 and may
// come in any order; every node must be one of nodes and appear at most
// once in a round. Errors name the line.
func ParsePlan(r io.Reader, name string, nodes []string) (*Plan, error) {
	if err := checkNodes(nodes); err != nil {
		return nil, err
	}
	p := &Plan{Pattern: "file", Nodes: slices.Clone(nodes)}
	byRound := map[int][]Pair{}
	busy := map[uint64]int32{} // by round << 32 | node index: the line of its pair there
	index := p.nodeIndex()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxPlanLine)
	line := 1
	for ; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		round, err := strconv.Atoi(f[0])
		if len(f) != 3 || err != nil || round < 1 || round > math.MaxInt32 {
			return nil, fmt.Errorf("%s:%d: %q: want \"<round> <node1> <node2>\" with a round from 1 (example: 1 n1 n2)", name, line, text)
		}
		pair := Pair{f[1], f[2]}
		if err := p.checkPair(pair, index); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		// The plan's own copies of the names: the line can go.
		src, dst := index[pair.Src], index[pair.Dst]
		pair = Pair{p.Nodes[src], p.Nodes[dst]}
		for _, n := range []int{src, dst} {
			key := uint64(round)<<32 | uint64(n)
			if prev, ok := busy[key]; ok {
				return nil, fmt.Errorf("%s:%d: node %s is already in round %d (line %d): a node can be in one pair per round", name, line, p.Nodes[n], round, prev)
			}
			busy[key] = int32(line)
		}
		byRound[round] = append(byRound[round], pair)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: a line over %d bytes: not a plan", name, line, maxPlanLine)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(byRound) == 0 {
		return nil, fmt.Errorf("%s: no pairs (want lines \"<round> <node1> <node2>\")", name)
	}
	rounds := make([]int, 0, len(byRound))
	for r := range byRound {
		rounds = append(rounds, r)
	}
	slices.Sort(rounds)
	for _, r := range rounds {
		p.Rounds = append(p.Rounds, byRound[r])
	}
	return p, nil
}

// Write writes the plan in ClusterKit's format, with the pattern and the
// node list as comments; ParsePlan reads it back (renumbering rounds from 1).
func (p *Plan) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# rdmafleet plan: <round> <src> <dst>; src runs the benchmark, dst runs rdmapeer\n")
	fmt.Fprintf(bw, "# pattern: %s\n# nodes: %s\n", p.Pattern, strings.Join(p.Nodes, " "))
	for _, s := range p.Steps() {
		fmt.Fprintf(bw, "%d %s %s\n", s.Round, s.Src, s.Dst)
	}
	return bw.Flush()
}

// ReadPlan reads a plan written by Write: the node list and pattern from
// its comments, the pairs as ParsePlan does.
func ReadPlan(r io.Reader, name string) (*Plan, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var nodes []string
	pattern := ""
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "# nodes: "); ok {
			nodes = strings.Fields(v)
			for i, n := range nodes {
				nodes[i] = strings.Clone(n) // not a view that keeps the whole file
			}
		}
		if v, ok := strings.CutPrefix(line, "# pattern: "); ok {
			pattern = strings.TrimSpace(v)
		}
	}
	if nodes == nil || pattern == "" {
		return nil, fmt.Errorf("%s: no \"# nodes:\" or \"# pattern:\" line: not a plan written by rdmafleet", name)
	}
	p, err := ParsePlan(strings.NewReader(string(data)), name, nodes)
	if err != nil {
		return nil, err
	}
	p.Pattern = pattern
	return p, nil
}

// Build makes the plan that spec names: "all-pairs", "sample:K", or the
// name of a plan file (read with readFile) in ClusterKit's format.
func Build(spec string, nodes []string, seed uint64, readFile func(string) ([]byte, error)) (*Plan, error) {
	switch {
	case spec == "all-pairs" || spec == "":
		return AllPairs(nodes)
	case strings.HasPrefix(spec, "sample:"):
		k, err := strconv.Atoi(strings.TrimPrefix(spec, "sample:"))
		if err != nil {
			return nil, fmt.Errorf("plan %q: want sample:K with K a number of rounds (example: sample:3)", spec)
		}
		return Sample(nodes, k, seed)
	}
	data, err := readFile(spec)
	if err != nil {
		return nil, fmt.Errorf("plan %q is neither all-pairs, sample:K nor a readable plan file: %w", spec, err)
	}
	return ParsePlan(strings.NewReader(string(data)), spec, nodes)
}
