package fleet

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// Confidence is the level of the intervals in the matrix, benchstat's.
const Confidence = 0.95

// Results are the pair results of a fleet run, as read from benchfmt
// files whose benchmark names carry /src=NODE/dst=NODE.
//
// A pair's values are kept only until they are summarised: when Settle
// is called for the pair, or when a query (Cell, Centers, WriteMatrix)
// needs them. Then each cell keeps its median and its interval's printed
// form, and more results of that pair are refused (ErrSettled): read
// every file of a pair before asking for its cells.
type Results struct {
	Config  []string // the first file's configuration lines, "key: value"
	Benches []string // benchmark names without src, dst and GOMAXPROCS, in order of appearance
	Units   []string // tidied units (sec/op, p50-sec, ...), in order of appearance

	configRead bool
	keep       func(unit string) bool
	nodeID     map[string]int32
	nodes      []string         // by id
	slots      map[uint64]int32 // pair (src id << 32 | dst id) -> slot
	dense      []int32          // or, after Grow: by src id * denseN + dst id, -1 for none
	denseN     int
	pairOf     []uint64       // slot -> pair
	settled    []bool         // by slot
	tableOf    map[[2]int]int // (bench index, unit index) -> tables index
	tables     []*table
	tails      *tails
	pending    map[int32][]pendingValue // by slot: read and not summarised yet
	spare      [][]pendingValue
	scratch    []float64
	parser     *PairParser // for Read and ReadPair
	keys       []addKey    // Add's scratch
	counts     []int       // settle's scratch, by table
}

// table holds one matrix (one benchmark and unit): by slot, each cell's
// median and the index of its range in tails (0: no cell).
type table struct {
	bench, unit int
	center      []float64
	tail        []uint16
}

type addKey struct {
	bench, unit string
	table       int
}

type pendingValue struct {
	table int
	v     float64
}

// ErrSettled reports results of a pair whose cells are already summarised.
var ErrSettled = fmt.Errorf("pair already summarised")

// NewResults returns an empty set of results.
func NewResults() *Results { return NewResultsOf(nil) }

// NewResultsOf returns an empty set of results that keeps the cells of
// the units keep accepts (all, when keep is nil); the others are listed in
// Units and dropped. A fleet report keeps the matrix's times and the
// metric it judges: a 1000-node cell table is 5 MB.
func NewResultsOf(keep func(unit string) bool) *Results {
	return &Results{
		keep:    keep,
		nodeID:  map[string]int32{},
		slots:   map[uint64]int32{},
		tableOf: map[[2]int]int{},
		tails:   newTails(),
		pending: map[int32][]pendingValue{},
		parser:  NewPairParser(),
	}
}

// Grow makes room for the cells of n more pairs of at most nodes nodes.
func (r *Results) Grow(n, nodes int) {
	r.pairOf = slices.Grow(r.pairOf, n)
	r.settled = slices.Grow(r.settled, n)
	if len(r.slots) == 0 && len(r.dense) == 0 && nodes <= maxDense {
		// A slot by src and dst id: 4 MB for 1000 nodes, where the map
		// of half a million pairs took 19 MB.
		r.dense = make([]int32, nodes*nodes)
		r.denseN = nodes
		for i := range r.dense {
			r.dense[i] = -1
		}
	}
}

// maxDense is the most nodes whose slots Grow indexes by a square array.
const maxDense = 4096

func (r *Results) node(name string) int32 {
	if id, ok := r.nodeID[name]; ok {
		return id
	}
	id := int32(len(r.nodes))
	r.nodeID[name] = id
	r.nodes = append(r.nodes, name)
	return id
}

// slot returns the pair's slot, adding it when add is set (-1 otherwise).
func (r *Results) slot(src, dst string, add bool) int32 {
	var s, d int32
	if add {
		s, d = r.node(src), r.node(dst)
	} else {
		var ok1, ok2 bool
		s, ok1 = r.nodeID[src]
		d, ok2 = r.nodeID[dst]
		if !ok1 || !ok2 {
			return -1
		}
	}
	key := uint64(s)<<32 | uint64(uint32(d))
	if int(s) < r.denseN && int(d) < r.denseN {
		at := &r.dense[int(s)*r.denseN+int(d)]
		if *at < 0 && add {
			*at = r.newSlot(key)
		}
		return *at
	}
	if i, ok := r.slots[key]; ok {
		return i
	}
	if !add {
		return -1
	}
	i := r.newSlot(key)
	r.slots[key] = i
	return i
}

func (r *Results) newSlot(key uint64) int32 {
	i := int32(len(r.pairOf))
	r.pairOf = append(r.pairOf, key)
	r.settled = append(r.settled, false)
	return i
}

func (r *Results) tableFor(bench, unit string) int {
	b := slices.Index(r.Benches, bench)
	if b < 0 {
		b = len(r.Benches)
		r.Benches = append(r.Benches, bench)
	}
	u := slices.Index(r.Units, unit)
	if u < 0 {
		u = len(r.Units)
		r.Units = append(r.Units, unit)
	}
	if t, ok := r.tableOf[[2]int{b, u}]; ok {
		return t
	}
	if r.keep != nil && !r.keep(unit) {
		r.tableOf[[2]int{b, u}] = -1
		return -1
	}
	r.tables = append(r.tables, &table{bench: b, unit: u})
	r.tableOf[[2]int{b, u}] = len(r.tables) - 1
	return len(r.tables) - 1
}

// Add adds a parsed pair file's results; they stay pending until the pair
// is settled. It fails with ErrSettled, adding nothing, when the pair's
// cells are already summarised.
func (r *Results) Add(f *PairFile) error {
	if len(f.values) == 0 {
		return nil
	}
	for _, run := range f.runs {
		if slot := r.slot(run.src, run.dst, false); slot >= 0 && r.settled[slot] {
			return fmt.Errorf("%s: results of %s -> %s: %w (read every file of a pair before asking for its cells)", f.name, run.src, run.dst, ErrSettled)
		}
	}
	if !r.configRead && f.withConfig {
		r.Config, r.configRead = f.config, true
	}
	// A file holds a few (benchmark, unit) keys, in a cycle: each found
	// once, then by a short search from the last one.
	keys := r.keys[:0]
	k := 0
	for i, run := range f.runs {
		slot := r.slot(run.src, run.dst, true)
		p := r.pending[slot]
		if p == nil && len(r.spare) > 0 {
			p, r.spare = r.spare[len(r.spare)-1], r.spare[:len(r.spare)-1]
		}
		for _, v := range f.values[f.runStart(i):run.end] {
			found := false
			for range keys {
				if k = (k + 1) % len(keys); keys[k].bench == v.bench && keys[k].unit == v.unit {
					found = true
					break
				}
			}
			if !found {
				keys = append(keys, addKey{v.bench, v.unit, r.tableFor(v.bench, v.unit)})
				k = len(keys) - 1
			}
			if keys[k].table < 0 {
				continue // a unit not kept
			}
			p = append(p, pendingValue{keys[k].table, v.v})
		}
		r.pending[slot] = p
	}
	r.keys = keys[:0]
	return nil
}

// Read adds the results of one benchfmt file, of any pairs.
func (r *Results) Read(rd io.Reader, fileName string) error {
	var f PairFile
	if err := r.parser.ParseAll(rd, fileName, !r.configRead, &f); err != nil {
		return err
	}
	return r.Add(&f)
}

// ReadPair adds the results of one pair's file, all or nothing: it adds
// none of them, and returns why, when the file does not parse or holds a
// result of any pair other than src to dst (a file copied or misnamed must
// not rewrite another pair's cell).
func (r *Results) ReadPair(rd io.Reader, fileName, src, dst string) error {
	var f PairFile
	if err := r.parser.Parse(rd, fileName, src, dst, !r.configRead, &f); err != nil {
		return err
	}
	return r.Add(&f)
}

// Settle summarises the pair's cells: its values are dropped, and later
// results of the pair are refused.
func (r *Results) Settle(src, dst string) {
	if i := r.slot(src, dst, false); i >= 0 {
		r.settle(i)
	}
}

func (r *Results) settle(slot int32) {
	p := r.pending[slot]
	r.settled[slot] = true
	if p == nil {
		return
	}
	delete(r.pending, slot)
	// The values grouped by table, by counting: a pair has a few tables
	// and tens of values.
	if len(r.counts) < len(r.tables)+1 {
		r.counts = make([]int, len(r.tables)+1)
	}
	counts := r.counts[:len(r.tables)+1]
	clear(counts)
	for _, v := range p {
		counts[v.table+1]++
	}
	for t := 1; t < len(counts); t++ {
		counts[t] += counts[t-1]
	}
	r.scratch = slices.Grow(r.scratch[:0], len(p))[:len(p)]
	for _, v := range p {
		r.scratch[counts[v.table]] = v.v
		counts[v.table]++
	}
	// counts[t] is now the end of table t's values.
	start := 0
	for ti, t := range r.tables {
		end := counts[ti]
		if end == start {
			continue
		}
		if n := len(r.pairOf); len(t.center) < n {
			// As many as Grow made room for, at once.
			t.center = slices.Grow(t.center, cap(r.pairOf)-len(t.center))
			t.tail = slices.Grow(t.tail, cap(r.pairOf)-len(t.tail))
			t.center = append(t.center, make([]float64, n-len(t.center))...)
			t.tail = append(t.tail, make([]uint16, n-len(t.tail))...)
		}
		t.center[slot], t.tail[slot] = r.tails.summarise(r.scratch[start:end])
		start = end
	}
	r.spare = append(r.spare, p[:0])
}

// settleAll summarises every pending pair.
func (r *Results) settleAll() {
	for slot := range r.pending {
		r.settle(slot)
	}
}

func (r *Results) table(bench, unit string) *table {
	b, u := slices.Index(r.Benches, bench), slices.Index(r.Units, unit)
	if t, ok := r.tableOf[[2]int{b, u}]; ok && t >= 0 {
		return r.tables[t]
	}
	return nil
}

// Cell returns the summary of one pair's results for a benchmark and
// unit, and false when the pair has none.
func (r *Results) Cell(bench, unit, src, dst string) (Cell, bool) {
	r.settleAll()
	t, slot := r.table(bench, unit), r.slot(src, dst, false)
	if t == nil || slot < 0 || int(slot) >= len(t.tail) || t.tail[slot] == 0 {
		return Cell{}, false
	}
	c := r.tails.list[t.tail[slot]]
	c.Center = t.center[slot]
	return c, true
}

// Centers returns the median of every cell of one matrix, by src and dst,
// NaN where a pair has no result; rows and columns in the order of nodes.
func (r *Results) Centers(bench, unit string, nodes []string) [][]float64 {
	r.settleAll()
	grid := make([][]float64, len(nodes))
	for i := range grid {
		grid[i] = make([]float64, len(nodes))
		for j := range grid[i] {
			grid[i][j] = math.NaN()
		}
	}
	t := r.table(bench, unit)
	if t == nil {
		return grid
	}
	pos := r.positions(nodes)
	for slot, key := range r.pairOf {
		if slot >= len(t.tail) || t.tail[slot] == 0 {
			continue
		}
		if i, j := pos[key>>32], pos[uint32(key)]; i >= 0 && j >= 0 {
			grid[i][j] = t.center[slot]
		}
	}
	return grid
}

// positions maps node ids to their place in nodes, -1 when absent.
func (r *Results) positions(nodes []string) []int {
	pos := make([]int, len(r.nodes))
	for i := range pos {
		pos[i] = -1
	}
	for i, n := range nodes {
		if id, ok := r.nodeID[n]; ok && pos[id] < 0 {
			pos[id] = i
		}
	}
	return pos
}
