package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// ForestOptions configure a random forest classifier. The zero value of a
// field means the sklearn RandomForestClassifier default where one exists.
type ForestOptions struct {
	Trees       int    // number of trees; 0 means 100
	MaxFeatures int    // features visited per split; 0 means ⌊√features⌋, at least 1 (sklearn's "sqrt")
	MinLeaf     int    // least bootstrap weight in a leaf; 0 means 1
	MaxDepth    int    // 0 means unlimited
	MaxBins     int    // value bins per feature, 2..256; 0 means 256
	Seed        uint64 // the forest is a function of the data and this seed alone
	Workers     int    // goroutines growing trees; 0 means GOMAXPROCS
}

// Forest is a fitted random forest: bootstrap-sampled Gini trees whose
// predicted class probabilities are averaged, as in sklearn's
// RandomForestClassifier.predict_proba.
//
// It differs from sklearn in one deliberate way: each feature is cut into at
// most MaxBins value bins before growing (like histogram gradient boosting),
// which makes a split search linear in the node size. A feature with at most
// MaxBins distinct values is split exactly as sklearn would (at midpoints
// between neighbouring values); with more, split points are quantiles.
// Features are drawn per split as sklearn draws them, features found
// constant in a node are not drawn again below it, and the bootstrap
// weights are integer counts, so split scores are summed in integers.
type Forest struct {
	classes int
	cuts    [][]float64 // per feature, ascending upper edges of all bins but the last
	trees   []tree
}

type tree struct {
	nodes []node
	probs []float64 // classes values per leaf
}

// node is a split (feature ≥ 0) sending x[feature] ≤ threshold to node
// next and the rest to next+1, or a leaf (feature < 0) whose class
// probabilities start at probs[next]. Sixteen bytes, so a tree's upper
// levels stay in cache.
type node struct {
	feature   int32
	next      int32
	threshold float64
}

// FitForest grows a forest on rows x (x[i] is row i) with class labels
// y[i] in [0, classes).
func FitForest(x [][]float64, y []int, classes int, opt ForestOptions) (*Forest, error) {
	n := len(x)
	if n == 0 {
		return nil, errors.New("stats: forest: no rows")
	}
	if len(y) != n {
		return nil, fmt.Errorf("stats: forest: %d rows but %d labels", n, len(y))
	}
	if classes < 2 {
		return nil, fmt.Errorf("stats: forest: %d classes; need at least 2", classes)
	}
	p := len(x[0])
	if p == 0 {
		return nil, errors.New("stats: forest: rows have no features")
	}
	for i, row := range x {
		if len(row) != p {
			return nil, fmt.Errorf("stats: forest: row %d has %d features, want %d", i, len(row), p)
		}
		for j, v := range row {
			if math.IsNaN(v) {
				return nil, fmt.Errorf("stats: forest: row %d feature %d is NaN", i, j)
			}
		}
		if y[i] < 0 || y[i] >= classes {
			return nil, fmt.Errorf("stats: forest: row %d has class %d outside [0,%d)", i, y[i], classes)
		}
	}
	if opt.Trees <= 0 {
		opt.Trees = 100
	}
	if opt.MaxFeatures <= 0 {
		opt.MaxFeatures = max(1, int(math.Sqrt(float64(p))))
	}
	opt.MaxFeatures = min(opt.MaxFeatures, p)
	if opt.MinLeaf <= 0 {
		opt.MinLeaf = 1
	}
	if opt.MaxBins <= 0 || opt.MaxBins > 256 {
		opt.MaxBins = 256
	}
	opt.MaxBins = max(opt.MaxBins, 2)
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}

	f := &Forest{classes: classes, cuts: make([][]float64, p), trees: make([]tree, opt.Trees)}
	binned := make([][]uint8, p)
	col := make([]float64, n)
	for j := range p {
		for i := range n {
			col[i] = x[i][j]
		}
		f.cuts[j] = binCuts(col, opt.MaxBins)
		binned[j] = make([]uint8, n)
		for i := range n {
			binned[j][i] = uint8(binOf(f.cuts[j], x[i][j]))
		}
	}

	y32 := make([]int32, n)
	for i, c := range y {
		y32[i] = int32(c)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(opt.Workers, opt.Trees) {
		wg.Go(func() {
			g := newGrower(binned, f.cuts, y32, classes, opt)
			for t := range next {
				f.trees[t] = g.grow(rand.New(rand.NewPCG(opt.Seed, uint64(t)+1)))
			}
		})
	}
	for t := range opt.Trees {
		next <- t
	}
	close(next)
	wg.Wait()
	return f, nil
}

// PredictProba returns the class probabilities for one row: the mean over
// trees of the class shares in the leaf the row falls into.
func (f *Forest) PredictProba(row []float64) []float64 {
	out := make([]float64, f.classes)
	f.PredictProbaRows([][]float64{row}, out)
	return out
}

// predictBlock is how many rows PredictProbaRows passes through one tree
// before the next: enough for the tree's upper levels to be read once per
// block, few enough for the block's sums to stay in cache.
const predictBlock = 256

// PredictProbaRows writes PredictProba of every row of x into out, row
// after row (len(out) = len(x)·Classes()), with the same sums in the same
// order, so the same numbers; it allocates nothing. Rows go through the
// forest a block at a time, tree by tree, so each tree's nodes are read
// from cache for the whole block rather than from memory for every row.
func (f *Forest) PredictProbaRows(x [][]float64, out []float64) {
	k := f.classes
	if len(out) != len(x)*k {
		panic(fmt.Sprintf("stats: forest: %d rows need %d probabilities, got room for %d", len(x), len(x)*k, len(out)))
	}
	clear(out)
	for lo := 0; lo < len(x); lo += predictBlock {
		rows := x[lo:min(lo+predictBlock, len(x))]
		sums := out[lo*k : (lo+len(rows))*k]
		for _, t := range f.trees {
			for r, row := range rows {
				i := int32(0)
				for {
					nd := &t.nodes[i]
					if nd.feature < 0 {
						break
					}
					i = nd.next
					if row[nd.feature] > nd.threshold {
						i++
					}
				}
				leaf := t.probs[t.nodes[i].next : int(t.nodes[i].next)+k]
				dst := sums[r*k : r*k+k]
				for c, v := range leaf {
					dst[c] += v
				}
			}
		}
	}
	for c := range out {
		out[c] /= float64(len(f.trees))
	}
}

// binCuts returns at most maxBins-1 ascending cut points for a column: the
// midpoints between neighbouring distinct values when there are few enough,
// else midpoints at evenly spaced quantiles.
func binCuts(col []float64, maxBins int) []float64 {
	s := slices.Clone(col)
	slices.Sort(s)
	distinct := slices.Compact(slices.Clone(s))
	if len(distinct) <= maxBins {
		cuts := make([]float64, 0, len(distinct)-1)
		for i := 0; i+1 < len(distinct); i++ {
			cuts = append(cuts, distinct[i]+(distinct[i+1]-distinct[i])/2)
		}
		return cuts
	}
	var cuts []float64
	for b := 1; b < maxBins; b++ {
		pos := b * len(s) / maxBins
		lo := s[pos-1]
		// the next distinct value above lo
		k, _ := slices.BinarySearch(distinct, lo)
		if k+1 >= len(distinct) {
			break
		}
		c := lo + (distinct[k+1]-lo)/2
		if len(cuts) == 0 || c > cuts[len(cuts)-1] {
			cuts = append(cuts, c)
		}
	}
	return cuts
}

// binOf is the number of cuts below v, so that bin ≤ t ⇔ v ≤ cuts[t].
func binOf(cuts []float64, v float64) int {
	k, _ := slices.BinarySearch(cuts, v)
	return k
}

// grower holds one worker's scratch space for growing trees.
type grower struct {
	x       [][]uint8
	cuts    [][]float64
	y       []int32
	classes int
	opt     ForestOptions

	weight []int32 // bootstrap count per row
	idx    []entry // rows in the tree, partitioned node by node
	tmp    []entry
	counts []int32 // per-bin histogram for counting sort
	left   []int64
	total  []int64
	hist   []int32 // bins × classes
	// feature is the order features are drawn in; a node's first
	// span.constants entries are features known to be constant in it
	// (found constant in an ancestor), constant a copy of them that
	// survives the draws (sklearn's features and constant_features).
	feature  []int
	constant []int
	stack    []span
	nodes    []node
	probs    []float64
}

func newGrower(x [][]uint8, cuts [][]float64, y []int32, classes int, opt ForestOptions) *grower {
	n := len(y)
	return &grower{
		x: x, cuts: cuts, y: y, classes: classes, opt: opt,
		weight: make([]int32, n), idx: make([]entry, 0, n), tmp: make([]entry, n),
		counts: make([]int32, 257), hist: make([]int32, 256*min(classes, 4)), left: make([]int64, classes), total: make([]int64, classes),
		feature: make([]int, len(x)), constant: make([]int, len(x)),
	}
}

// entry is a row in the tree with its bootstrap weight and class, kept
// beside the row index so a node's scan reads them in sequence.
type entry struct{ row, w, c int32 }

type span struct {
	lo, hi, depth int
	self          int32 // index of this node in the tree
	constants     int   // features known constant in this node
}

func (g *grower) grow(r *rand.Rand) tree {
	n := len(g.y)
	for i := range g.feature {
		g.feature[i] = i // each tree starts alike, whichever worker grows it
	}
	clear(g.weight)
	for range n {
		g.weight[r.IntN(n)]++
	}
	g.idx = g.idx[:0]
	for i, w := range g.weight {
		if w > 0 {
			g.idx = append(g.idx, entry{int32(i), w, g.y[i]})
		}
	}
	// The tree grows in the worker's buffers, reused tree after tree, and
	// is copied out at its final size.
	t := tree{nodes: append(g.nodes[:0], node{}), probs: g.probs[:0]}
	stack := append(g.stack[:0], span{0, len(g.idx), 0, 0, 0})
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		feat, bin, mid, constants, ok := g.split(r, s)
		if !ok {
			t.nodes[s.self] = node{feature: -1, next: int32(len(t.probs))}
			t.probs = g.appendShares(t.probs, s.lo, s.hi)
			continue
		}
		l, rt := int32(len(t.nodes)), int32(len(t.nodes)+1)
		t.nodes = append(t.nodes, node{}, node{})
		t.nodes[s.self] = node{feature: int32(feat), next: l, threshold: g.cuts[feat][bin]}
		stack = append(stack, span{s.lo, mid, s.depth + 1, l, constants}, span{mid, s.hi, s.depth + 1, rt, constants})
	}
	g.stack, g.nodes, g.probs = stack, t.nodes, t.probs
	return tree{nodes: slices.Clone(t.nodes), probs: slices.Clone(t.probs)}
}

// appendShares appends the weighted class shares of rows idx[lo:hi].
func (g *grower) appendShares(probs []float64, lo, hi int) []float64 {
	n := len(probs)
	probs = append(probs, make([]float64, g.classes)...)
	out := probs[n:]
	var sum float64
	for _, e := range g.idx[lo:hi] {
		w := float64(e.w)
		out[e.c] += w
		sum += w
	}
	for c := range out {
		out[c] /= sum
	}
	return probs
}

// split finds the best Gini split of idx[s.lo:s.hi], partitions the rows,
// and returns the feature, the bin threshold, the partition point and the
// number of features known constant in the children.
//
// Features are drawn as sklearn's BestSplitter draws them: without
// replacement, skipping those known constant from an ancestor (a drawn
// known constant still counts as visited), until MaxFeatures features are
// visited and at least one of them was not constant, or none are left.
// A feature found constant here is known constant in the whole subtree.
func (g *grower) split(r *rand.Rand, s span) (feat, bin, mid, constants int, ok bool) {
	rows := g.idx[s.lo:s.hi]
	clear(g.total)
	var wTotal int64
	for _, e := range rows {
		w := int64(e.w)
		g.total[e.c] += w
		wTotal += w
	}
	if wTotal < int64(2*g.opt.MinLeaf) || (g.opt.MaxDepth > 0 && s.depth >= g.opt.MaxDepth) {
		return 0, 0, 0, 0, false
	}
	var sqTotal int64
	for _, v := range g.total {
		sqTotal += v * v
		if v == wTotal {
			return 0, 0, 0, 0, false // pure
		}
	}
	// The parent's score, sqTotal/wTotal; a split must beat it.
	best := float64(sqTotal) / float64(wTotal)
	bestFeat, bestBin := -1, 0
	known := s.constants
	drawn, found := 0, 0 // known constants drawn, constants found in this node
	allConst := known
	last := len(g.feature) // features[last:] were evaluated in this node
	visited := 0
	for last > allConst && (visited < g.opt.MaxFeatures || visited <= found+drawn) {
		visited++
		j := drawn + r.IntN(last-found-drawn)
		if j < known {
			g.feature[drawn], g.feature[j] = g.feature[j], g.feature[drawn]
			drawn++
			continue
		}
		j += found
		f := g.feature[j]
		score, b, varies := g.bestSplit(rows, f, wTotal, sqTotal)
		if !varies {
			g.feature[j], g.feature[allConst] = g.feature[allConst], g.feature[j]
			found++
			allConst++
			continue
		}
		last--
		g.feature[last], g.feature[j] = g.feature[j], g.feature[last]
		if score > best+1e-12 {
			best, bestFeat, bestBin = score, f, b
		}
	}
	// The known constants go back to their order for the siblings; the
	// ones found here join them for the children.
	copy(g.feature[:known], g.constant[:known])
	copy(g.constant[known:allConst], g.feature[known:allConst])
	if bestFeat < 0 {
		return 0, 0, 0, 0, false
	}
	col := g.x[bestFeat]
	a, b := 0, len(rows)-1
	for a <= b {
		if int(col[rows[a].row]) <= bestBin {
			a++
		} else {
			rows[a], rows[b] = rows[b], rows[a]
			b--
		}
	}
	return bestFeat, bestBin, s.lo + a, allConst, true
}

// bestSplit scores the best split of rows on feature f: the bin it cuts
// after and the Gini score sqL/wL + sqR/wR (higher is better; -Inf when no
// cut leaves MinLeaf weight on both sides). varies is false when the
// feature is constant in the node.
func (g *grower) bestSplit(rows []entry, f int, wTotal, sqTotal int64) (score float64, bin int, varies bool) {
	nb := len(g.cuts[f]) + 1
	if nb < 2 {
		return 0, 0, false
	}
	col := g.x[f]
	if g.classes <= 4 && len(rows) >= nb {
		// Few classes, many rows: a class histogram per bin is cheaper
		// than ordering the rows.
		return g.histSplit(rows, col, nb, wTotal, sqTotal)
	}
	sorted := g.sortByBin(rows, col, nb)
	if col[sorted[0].row] == col[sorted[len(sorted)-1].row] {
		return 0, 0, false
	}
	score = math.Inf(-1)
	minLeaf := int64(g.opt.MinLeaf)
	clear(g.left)
	var wL, sqL, cross int64 // cross is Σ_c T_c·L_c
	for p := 0; p < len(sorted)-1; p++ {
		e := sorted[p]
		w, c := int64(e.w), e.c
		sqL += w * (2*g.left[c] + w)
		cross += w * g.total[c]
		g.left[c] += w
		wL += w
		if col[sorted[p+1].row] == col[e.row] {
			continue
		}
		wR := wTotal - wL
		if wL < minLeaf || wR < minLeaf {
			continue
		}
		// Σ_c R_c² from Σ_c (T_c − L_c)² = sqTotal − 2 Σ T_c L_c + sqL.
		sqR := sqTotal - 2*cross + sqL
		if sc := float64(sqL)/float64(wL) + float64(sqR)/float64(wR); sc > score {
			score, bin = sc, int(col[e.row])
		}
	}
	return score, bin, true
}

// histSplit is bestSplit from a per-bin class histogram.
func (g *grower) histSplit(rows []entry, col []uint8, nb int, wTotal, sqTotal int64) (score float64, bin int, varies bool) {
	k := g.classes
	hist := g.hist[:nb*k]
	clear(hist)
	if k == 2 {
		for _, e := range rows {
			hist[int(col[e.row])<<1|int(e.c)] += e.w
		}
	} else {
		for _, e := range rows {
			hist[int(col[e.row])*k+int(e.c)] += e.w
		}
	}
	score = math.Inf(-1)
	minLeaf := int64(g.opt.MinLeaf)
	clear(g.left)
	var wL int64
	last := -1 // the last non-empty bin seen
	for b := 0; b < nb; b++ {
		var wb int64
		for c := 0; c < k; c++ {
			wb += int64(hist[b*k+c])
		}
		if wb == 0 {
			continue
		}
		if last >= 0 {
			// Split between bin last (left) and bin b (right).
			wR := wTotal - wL
			if wL >= minLeaf && wR >= minLeaf {
				var sqL, cross int64
				for c, lv := range g.left {
					sqL += lv * lv
					cross += lv * g.total[c]
				}
				sqR := sqTotal - 2*cross + sqL
				if sc := float64(sqL)/float64(wL) + float64(sqR)/float64(wR); sc > score {
					score, bin = sc, last
				}
			}
			varies = true
		}
		for c := 0; c < k; c++ {
			g.left[c] += int64(hist[b*k+c])
		}
		wL += wb
		last = b
	}
	return score, bin, varies
}

// sortByBin returns rows ordered by their bin in col (counting sort for big
// nodes, insertion sort for small ones), in g.tmp.
func (g *grower) sortByBin(rows []entry, col []uint8, nb int) []entry {
	out := g.tmp[:len(rows)]
	if len(rows) < 64 {
		copy(out, rows)
		for a := 1; a < len(out); a++ {
			v := out[a]
			b := a
			for ; b > 0 && col[out[b-1].row] > col[v.row]; b-- {
				out[b] = out[b-1]
			}
			out[b] = v
		}
		return out
	}
	counts := g.counts[:nb+1]
	clear(counts)
	for _, e := range rows {
		counts[int(col[e.row])+1]++
	}
	for b := 1; b <= nb; b++ {
		counts[b] += counts[b-1]
	}
	for _, e := range rows {
		b := col[e.row]
		out[counts[b]] = e
		counts[b]++
	}
	return out
}
