package fleet

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func nodeNames(n int) []string {
	nodes := make([]string, n)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("n%d", i+1)
	}
	return nodes
}

// checkRounds asserts that no node is in two pairs of one round and
// returns how often each unordered pair was measured.
func checkRounds(t *testing.T, p *Plan) map[[2]string]int {
	t.Helper()
	seen := map[[2]string]int{}
	for r, round := range p.Rounds {
		busy := map[string]bool{}
		for _, pair := range round {
			require.NotEqual(t, pair.Src, pair.Dst)
			require.False(t, busy[pair.Src] || busy[pair.Dst], "round %d: %v: a node twice", r+1, pair)
			busy[pair.Src], busy[pair.Dst] = true, true
			seen[pair.key()]++
		}
	}
	return seen
}

func TestAllPairs(t *testing.T) {
	for n := 2; n <= 65; n++ {
		nodes := nodeNames(n)
		p, err := AllPairs(nodes)
		require.NoError(t, err)
		wantRounds, perRound := n-1, n/2
		if n%2 == 1 {
			wantRounds = n
		}
		require.Len(t, p.Rounds, wantRounds, "n=%d", n)
		for _, round := range p.Rounds {
			require.Len(t, round, perRound, "n=%d: every round has n/2 pairs", n)
		}
		seen := checkRounds(t, p)
		require.Len(t, seen, n*(n-1)/2, "n=%d: every pair", n)
		for k, c := range seen {
			require.Equal(t, 1, c, "n=%d: pair %v measured %d times", n, k, c)
		}
		// Directions are balanced: each node runs the benchmark in about
		// half of its n-1 pairs.
		src := map[string]int{}
		for _, s := range p.Steps() {
			src[s.Src]++
		}
		for _, node := range nodes {
			assert.InDelta(t, float64(n-1)/2, src[node], 1, "n=%d node %s", n, node)
		}
	}
}

func TestAllPairsFour(t *testing.T) {
	// Circle method by hand for n1..n4: n1 fixed; ring n1 n2 n3 n4, then
	// n1 n4 n2 n3, then n1 n3 n4 n2; pairs (0,3), (1,2); slot 1 runs the
	// benchmark, and n1 does in rounds 1 and 3.
	p, err := AllPairs(nodeNames(4))
	require.NoError(t, err)
	assert.Equal(t, [][]Pair{
		{{"n1", "n4"}, {"n2", "n3"}},
		{{"n3", "n1"}, {"n4", "n2"}},
		{{"n1", "n2"}, {"n3", "n4"}},
	}, p.Rounds)
}

func TestBadNodeLists(t *testing.T) {
	for _, tc := range []struct {
		nodes []string
		want  string
	}{
		{nil, "0 node(s)"},
		{[]string{"n1"}, `1 node(s) ["n1"]: a latency matrix needs at least 2 (sbatch -N 2 or more)`},
		{[]string{"n1", "n2", "n1"}, "node n1 appears twice in the node list"},
		{[]string{"n1", "a/b"}, `node name "a/b"`},
	} {
		_, err := AllPairs(tc.nodes)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		_, err = Build("sample:1", tc.nodes, 1, os.ReadFile)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestSample(t *testing.T) {
	for n := 2; n <= 65; n++ {
		for _, k := range []int{1, min(2, n-1), n - 1} {
			p, err := Sample(nodeNames(n), k, 42)
			require.NoError(t, err)
			require.Len(t, p.Rounds, k)
			seen := checkRounds(t, p)
			for _, c := range seen {
				require.Equal(t, 1, c)
			}
			count := map[string]int{}
			for _, s := range p.Steps() {
				count[s.Src]++
				count[s.Dst]++
			}
			for _, node := range p.Nodes {
				if n%2 == 0 {
					require.Equal(t, k, count[node], "n=%d k=%d: each node measured k times", n, k)
				} else {
					require.LessOrEqual(t, count[node], k)
					require.GreaterOrEqual(t, count[node], k-1)
				}
			}
		}
	}
	a, _ := Sample(nodeNames(16), 3, 7)
	b, _ := Sample(nodeNames(16), 3, 7)
	c, _ := Sample(nodeNames(16), 3, 8)
	assert.Equal(t, a.Rounds, b.Rounds, "the same seed, the same plan")
	assert.NotEqual(t, a.Rounds, c.Rounds)
	assert.Equal(t, "sample:3", a.Pattern)

	_, err := Sample(nodeNames(4), 4, 1)
	assert.EqualError(t, err, "sample:4: want 1 to 3 rounds for 4 nodes (all-pairs measures every pair)")
	_, err = Build("sample:x", nodeNames(4), 1, os.ReadFile)
	assert.ErrorContains(t, err, "want sample:K")
}

func TestParsePlan(t *testing.T) {
	nodes := nodeNames(4)
	p, err := ParsePlan(strings.NewReader("# mine\n2 n1 n3\n\n1 n1 n2\n1 n3 n4\n"), "pairs.txt", nodes)
	require.NoError(t, err)
	assert.Equal(t, [][]Pair{{{"n1", "n2"}, {"n3", "n4"}}, {{"n1", "n3"}}}, p.Rounds)
	assert.Equal(t, []Step{
		{Pair{"n1", "n2"}, 1, 0}, {Pair{"n3", "n4"}, 1, 1}, {Pair{"n1", "n3"}, 2, 2},
	}, p.Steps())
	assert.Equal(t, []string{"n1", "n3"}, p.RoundNodes(2))
	s, ok := p.Find(1, "n4")
	assert.True(t, ok)
	assert.Equal(t, Step{Pair{"n3", "n4"}, 1, 1}, s)
	_, ok = p.Find(2, "n2")
	assert.False(t, ok, "n2 sits out round 2")

	for _, tc := range []struct{ file, want string }{
		{"1 n1 n9\n", "pairs.txt:1: pair n1 n9: node n9 is not in the allocation (n1,n2,n3,n4)"},
		{"1 n1 n2\n1 n2 n3\n", "pairs.txt:2: node n2 is already in round 1 (line 1): a node can be in one pair per round"},
		{"1 n1 n1\n", "a node cannot be measured against itself"},
		{"x n1 n2\n", `pairs.txt:1: "x n1 n2": want "<round> <node1> <node2>"`},
		{"0 n1 n2\n", "with a round from 1"},
		{"1 n1\n", "want \"<round> <node1> <node2>\""},
		{"# nothing\n", "pairs.txt: no pairs"},
	} {
		_, err := ParsePlan(strings.NewReader(tc.file), "pairs.txt", nodes)
		require.Error(t, err, tc.file)
		assert.Contains(t, err.Error(), tc.want, tc.file)
	}
}

func TestPlanRoundTrip(t *testing.T) {
	p, err := AllPairs(nodeNames(5))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, p.Write(&buf))
	assert.True(t, strings.HasPrefix(buf.String(), "# rdmafleet plan"))
	q, err := ReadPlan(&buf, "plan.txt")
	require.NoError(t, err)
	assert.Equal(t, p, q)

	_, err = ReadPlan(strings.NewReader("1 n1 n2\n"), "plan.txt")
	assert.ErrorContains(t, err, "not a plan written by rdmafleet")
	_, err = Build("/nonexistent/plan", nodeNames(2), 1, os.ReadFile)
	assert.ErrorContains(t, err, `plan "/nonexistent/plan" is neither all-pairs, sample:K nor a readable plan file`)
}

func TestRetest(t *testing.T) {
	nodes := nodeNames(6)
	flagged := []Pair{{"n1", "n2"}, {"n3", "n2"}, {"n4", "n5"}, {"n6", "n2"}}
	p, err := Retest(nodes, flagged, 0)
	require.NoError(t, err)
	// n2 is in three pairs: three rounds; n4-n5 fits in the first.
	assert.Equal(t, [][]Pair{{{"n1", "n2"}, {"n4", "n5"}}, {{"n3", "n2"}}, {{"n6", "n2"}}}, p.Rounds)
	p, err = Retest(nodes, flagged, 1)
	require.NoError(t, err)
	assert.Len(t, p.Rounds, 4, "one pair per round")
	checkRounds(t, p)
	_, err = Retest(nodes, nil, 0)
	assert.Error(t, err)
	_, err = Retest(nodes, []Pair{{"n1", "x"}}, 0)
	assert.ErrorContains(t, err, "node x is not in the allocation")
}
