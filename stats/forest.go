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
	MaxFeatures int    // features tried per split; 0 means round(sqrt(features)), at least 1
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
type Forest struct {
	classes int
	cuts    [][]float64 // per feature, ascending upper edges of all bins but the last
	trees   []tree
}

type tree struct {
	nodes []node
	probs []float64 // classes values per leaf
}

// node is a split (feature ≥ 0) sending x[feature] ≤ threshold left, or a leaf
// (feature < 0) whose class probabilities start at probs[leaf].
type node struct {
	feature     int32
	left, right int32
	leaf        int32
	threshold   float64
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
		opt.MaxFeatures = max(1, int(math.Round(math.Sqrt(float64(p)))))
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

	next := make(chan int)
	var wg sync.WaitGroup
	for range min(opt.Workers, opt.Trees) {
		wg.Go(func() {
			g := newGrower(binned, f.cuts, y, classes, opt)
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

// Classes is the number of classes the forest was fitted on.
func (f *Forest) Classes() int { return f.classes }

// PredictProba returns the class probabilities for one row: the mean over
// trees of the class shares in the leaf the row falls into.
func (f *Forest) PredictProba(row []float64) []float64 {
	out := make([]float64, f.classes)
	for _, t := range f.trees {
		i := int32(0)
		for t.nodes[i].feature >= 0 {
			nd := &t.nodes[i]
			if row[nd.feature] <= nd.threshold {
				i = nd.left
			} else {
				i = nd.right
			}
		}
		leaf := t.probs[t.nodes[i].leaf : int(t.nodes[i].leaf)+f.classes]
		for c, v := range leaf {
			out[c] += v
		}
	}
	for c := range out {
		out[c] /= float64(len(f.trees))
	}
	return out
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
	y       []int
	classes int
	opt     ForestOptions

	weight  []int32 // bootstrap count per row
	idx     []int32 // rows in the tree, partitioned node by node
	tmp     []int32
	counts  []int32 // per-bin histogram for counting sort
	left    []float64
	total   []float64
	hist    []float64 // bins × classes
	feature []int
}

func newGrower(x [][]uint8, cuts [][]float64, y []int, classes int, opt ForestOptions) *grower {
	n := len(y)
	feats := make([]int, len(x))
	for i := range feats {
		feats[i] = i
	}
	return &grower{
		x: x, cuts: cuts, y: y, classes: classes, opt: opt,
		weight: make([]int32, n), idx: make([]int32, 0, n), tmp: make([]int32, n),
		counts: make([]int32, 257), hist: make([]float64, 256*min(classes, 4)), left: make([]float64, classes), total: make([]float64, classes),
		feature: feats,
	}
}

type span struct {
	lo, hi, depth int
	self          int32 // index of this node in the tree
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
			g.idx = append(g.idx, int32(i))
		}
	}
	var t tree
	t.nodes = append(t.nodes, node{})
	stack := []span{{0, len(g.idx), 0, 0}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		feat, bin, mid, ok := g.split(r, s)
		if !ok {
			t.nodes[s.self] = node{feature: -1, leaf: int32(len(t.probs))}
			t.probs = g.appendShares(t.probs, s.lo, s.hi)
			continue
		}
		l, rt := int32(len(t.nodes)), int32(len(t.nodes)+1)
		t.nodes = append(t.nodes, node{}, node{})
		t.nodes[s.self] = node{feature: int32(feat), left: l, right: rt, threshold: g.cuts[feat][bin]}
		stack = append(stack, span{s.lo, mid, s.depth + 1, l}, span{mid, s.hi, s.depth + 1, rt})
	}
	return t
}

// appendShares appends the weighted class shares of rows idx[lo:hi].
func (g *grower) appendShares(probs []float64, lo, hi int) []float64 {
	n := len(probs)
	probs = append(probs, make([]float64, g.classes)...)
	out := probs[n:]
	var sum float64
	for _, i := range g.idx[lo:hi] {
		w := float64(g.weight[i])
		out[g.y[i]] += w
		sum += w
	}
	for c := range out {
		out[c] /= sum
	}
	return probs
}

// split finds the best Gini split of idx[s.lo:s.hi] over MaxFeatures random
// features (more are tried while the drawn ones are constant, as sklearn
// does), partitions the rows, and returns the feature, the bin threshold and
// the partition point.
func (g *grower) split(r *rand.Rand, s span) (feat, bin, mid int, ok bool) {
	rows := g.idx[s.lo:s.hi]
	clear(g.total)
	var wTotal float64
	for _, i := range rows {
		w := float64(g.weight[i])
		g.total[g.y[i]] += w
		wTotal += w
	}
	if wTotal < float64(2*g.opt.MinLeaf) || (g.opt.MaxDepth > 0 && s.depth >= g.opt.MaxDepth) {
		return 0, 0, 0, false
	}
	var sqTotal float64
	pure := false
	for _, v := range g.total {
		sqTotal += v * v
		if v == wTotal {
			pure = true
		}
	}
	if pure {
		return 0, 0, 0, false
	}
	// The parent's score, sqTotal/wTotal; a split must beat it.
	best := sqTotal / wTotal
	bestFeat, bestBin := -1, 0
	minLeaf := float64(g.opt.MinLeaf)
	tried := 0
	for k := 0; k < len(g.feature) && tried < g.opt.MaxFeatures; k++ {
		// Partial Fisher–Yates: draw the next feature without replacement.
		j := k + r.IntN(len(g.feature)-k)
		g.feature[k], g.feature[j] = g.feature[j], g.feature[k]
		f := g.feature[k]
		nb := len(g.cuts[f]) + 1
		if nb < 2 {
			continue
		}
		col := g.x[f]
		if g.classes <= 4 && len(rows) >= nb {
			// Few classes, many rows: a class histogram per bin is cheaper
			// than ordering the rows.
			score, bin, ok := g.histSplit(rows, col, nb, wTotal, sqTotal)
			if !ok {
				continue // constant in this node
			}
			tried++
			if score > best+1e-12 {
				best, bestFeat, bestBin = score, f, bin
			}
			continue
		}
		sorted := g.sortByBin(rows, col, nb)
		if col[sorted[0]] == col[sorted[len(sorted)-1]] {
			continue // constant in this node
		}
		tried++
		clear(g.left)
		var wL, sqL, cross float64 // cross is Σ_c T_c·L_c
		for p := 0; p < len(sorted)-1; p++ {
			i := sorted[p]
			w := float64(g.weight[i])
			c := g.y[i]
			sqL += w * (2*g.left[c] + w)
			cross += w * g.total[c]
			g.left[c] += w
			wL += w
			if col[sorted[p+1]] == col[i] {
				continue
			}
			wR := wTotal - wL
			if wL < minLeaf || wR < minLeaf {
				continue
			}
			// Σ_c R_c² from Σ_c (T_c − L_c)² = sqTotal − 2 Σ T_c L_c + sqL.
			sqR := sqTotal - 2*cross + sqL
			if score := sqL/wL + sqR/wR; score > best+1e-12 {
				best, bestFeat, bestBin = score, f, int(col[i])
			}
		}
	}
	if bestFeat < 0 {
		return 0, 0, 0, false
	}
	col := g.x[bestFeat]
	a, b := 0, len(rows)-1
	for a <= b {
		if int(col[rows[a]]) <= bestBin {
			a++
		} else {
			rows[a], rows[b] = rows[b], rows[a]
			b--
		}
	}
	return bestFeat, bestBin, s.lo + a, true
}

// histSplit scores the best split of rows on one feature from a per-bin
// class histogram. ok is false when the feature is constant in the node;
// score is -Inf when no split leaves MinLeaf weight on both sides.
func (g *grower) histSplit(rows []int32, col []uint8, nb int, wTotal, sqTotal float64) (score float64, bin int, ok bool) {
	k := g.classes
	hist := g.hist[:nb*k]
	clear(hist)
	for _, i := range rows {
		hist[int(col[i])*k+g.y[i]] += float64(g.weight[i])
	}
	score = math.Inf(-1)
	minLeaf := float64(g.opt.MinLeaf)
	clear(g.left)
	var wL float64
	last := -1 // the last non-empty bin seen
	for b := 0; b < nb; b++ {
		var wb float64
		for c := 0; c < k; c++ {
			wb += hist[b*k+c]
		}
		if wb == 0 {
			continue
		}
		if last >= 0 {
			// Split between bin last (left) and bin b (right).
			wR := wTotal - wL
			if wL >= minLeaf && wR >= minLeaf {
				var sqL, cross float64
				for c, lv := range g.left {
					sqL += lv * lv
					cross += lv * g.total[c]
				}
				sqR := sqTotal - 2*cross + sqL
				if sc := sqL/wL + sqR/wR; sc > score {
					score, bin = sc, last
				}
			}
			ok = true
		}
		for c := 0; c < k; c++ {
			g.left[c] += hist[b*k+c]
		}
		wL += wb
		last = b
	}
	return score, bin, ok
}

// sortByBin returns rows ordered by their bin in col (counting sort for big
// nodes, insertion sort for small ones), in g.tmp.
func (g *grower) sortByBin(rows []int32, col []uint8, nb int) []int32 {
	out := g.tmp[:len(rows)]
	if len(rows) < 64 {
		copy(out, rows)
		for a := 1; a < len(out); a++ {
			v := out[a]
			b := a
			for ; b > 0 && col[out[b-1]] > col[v]; b-- {
				out[b] = out[b-1]
			}
			out[b] = v
		}
		return out
	}
	counts := g.counts[:nb+1]
	clear(counts)
	for _, i := range rows {
		counts[int(col[i])+1]++
	}
	for b := 1; b <= nb; b++ {
		counts[b] += counts[b-1]
	}
	for _, i := range rows {
		b := col[i]
		out[counts[b]] = i
		counts[b]++
	}
	return out
}
