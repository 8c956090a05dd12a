package audit

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/glossobench/glossobench/stats"
)

// parallel runs f(i) for i in [0,n) on workers goroutines. Each f writes
// only its own slot, so results do not depend on scheduling.
func parallel(n, workers int, f func(worker, i int)) {
	var wg sync.WaitGroup
	workers = max(1, min(workers, n))
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				f(w, i)
			}
		})
	}
	wg.Wait()
}

// bootstrapCI is the 95% percentile interval of the AUC of fixed ratings
// over resamples of the rows, stratified by label: each resample draws as
// many yes rows from the yes rows and no rows from the no rows as there are.
// The ratings are not refitted; the interval is the headline's, never L's.
//
// The rows are sorted by rating once; a resample is a count per position
// (multinomialCounts), and its AUC is the weighted Mann–Whitney sum read in
// one pass over the positions, so no resample sorts or gathers rows.
func bootstrapCI(y []bool, ratings []float64, resamples int, seed uint64, workers int) [2]float64 {
	n := len(y)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmpFloat(ratings[a], ratings[b]) })
	// In rating order: yes[p] is 1 for a yes row, last[p] is 1 where a tie
	// group ends.
	yes := make([]uint8, n)
	last := make([]uint8, n)
	ties := false
	var nPos int
	for p, i := range order {
		if y[i] {
			yes[p] = 1
			nPos++
		}
		if p+1 == n || ratings[order[p+1]] != ratings[i] {
			last[p] = 1
		} else {
			ties = true
		}
	}
	var at [2][]int32 // the positions of the no and of the yes rows
	for p, v := range yes {
		at[v] = append(at[v], int32(p))
	}
	work := make([][]int32, workers)
	for w := range work {
		work[w] = make([]int32, n)
	}
	vals := make([]float64, resamples)
	parallel(resamples, workers, func(w, b int) {
		cnt := work[w]
		multinomialCounts(rand.NewPCG(seed, 0xb0075742+uint64(b)), cnt, yes, at)
		vals[b] = float64(weightedMannWhitney(cnt, yes, last, ties)) / (2 * float64(nPos) * float64(n-nPos))
	})
	slices.Sort(vals)
	return [2]float64{stats.Quantile(vals, 0.025), stats.Quantile(vals, 0.975)}
}

// weightedMannWhitney is twice the Mann–Whitney sum of rows in rating order
// weighted by cnt: Σ over yes rows of cnt × (2 × the no weight below its tie
// group + the no weight in it). It is exact in integers.
func weightedMannWhitney(cnt []int32, yes, last []uint8, ties bool) int64 {
	yes = yes[:len(cnt)]
	var sum, negBelow int64
	if !ties {
		for p, c := range cnt {
			// c's share on the yes side: c for a yes row, else 0.
			yc := int64(c & -int32(yes[p]))
			sum += yc * negBelow
			negBelow += int64(c) - yc
		}
		return 2 * sum
	}
	last = last[:len(cnt)]
	var gp, gn int64
	for p, c := range cnt {
		yc := int64(c & -int32(yes[p]))
		gp += yc
		gn += int64(c) - yc
		if last[p] == 1 {
			sum += gp * (2*negBelow + gn)
			negBelow += gn
			gp, gn = 0, 0
		}
	}
	return sum
}

// multinomialCounts sets cnt to one stratified bootstrap resample: the
// positions of each class (yes[p], listed in at[class]) get counts summing
// to the class's size, a uniform multinomial, as if as many rows were drawn
// with replacement from the class.
//
// It draws a Poisson(1) count per position (see poissonFill) and then
// corrects each class's total: a surplus is removed one unit at a time, each
// unit chosen uniformly among the class's units (by rejection), a shortfall
// added one uniform draw at a time. Given their total t, independent
// Poisson counts are a uniform multinomial of t; removing uniform units or
// adding uniform draws leaves a uniform multinomial of the new total, so the
// result is exactly the multinomial the row-by-row draw gives, at one cheap
// draw per position and about √n corrections.
func multinomialCounts(src *rand.PCG, cnt []int32, yes []uint8, at [2][]int32) {
	total, seen := poissonFill(src, cnt, yes)
	r := rand.New(src)
	for class, at := range at {
		want := int32(len(at))
		// The largest count in the class, the rejection's bound.
		most := int32(bits.Len32(seen[class])) - 1
		for total[class] > want {
			// A position with probability proportional to its count.
			p := at[r.IntN(len(at))]
			if r.Int32N(most) < cnt[p] {
				cnt[p]--
				total[class]--
			}
		}
		for total[class] < want {
			cnt[at[r.IntN(len(at))]]++
			total[class]++
		}
	}
}

// poissonFill sets cnt to Poisson(1) draws in position order and returns
// per class of yes[p] the counts' total and the set of counts drawn (bit c
// for count c; counts stay under 32, see TestPoissonDraws). A draw inverts
// a 64-bit uniform reading its top 12 bits first: they settle the draw in
// all but a few cells of the 4,096 (poissonTop), so one 64-bit random
// number serves five draws, and only in a straddling cell are the other 52
// bits drawn. The draws are those of poissonInvert on fresh uniforms.
//
// Two plain loops, the draws and then the tally, each keep their values in
// registers; the tally keeps its sums in locals, not in arrays indexed by
// the class (a store and a load per position through memory).
func poissonFill(src *rand.PCG, cnt []int32, yes []uint8) (total [2]int32, seen [2]uint32) {
	n := len(cnt)
	for p := 0; p < n; {
		r := src.Uint64()
		end := min(p+5, n)
		for ; p < end; p++ {
			u := r & (1<<12 - 1)
			r >>= 12
			c := int32(poissonTop[u])
			if c == poissonSplit {
				c = poissonInvert(u<<52 | src.Uint64()>>12)
			}
			cnt[p] = c
		}
	}
	yes = yes[:n]
	var all, yesTotal int32
	var seenBoth uint64 // bit c for a no row's count c, bit 32+c for a yes row's
	for p, c := range cnt {
		y := int32(yes[p])
		all += c
		yesTotal += c & -y
		seenBoth |= 1 << ((uint(c) + 32*uint(y)) & 63)
	}
	return [2]int32{all - yesTotal, yesTotal}, [2]uint32{uint32(seenBoth), uint32(seenBoth >> 32)}
}

// poissonCDF[k] is P(X ≤ k) for X ~ Poisson(1), scaled to 2⁶⁴, up to the k
// where it rounds to 1 in float64.
var poissonCDF = func() []uint64 {
	var out []uint64
	pk, cum := math.Exp(-1), 0.0
	for k := 1; ; k++ {
		cum += pk
		if cum >= 1-0x1p-53 {
			return out
		}
		out = append(out, uint64(math.Ldexp(cum, 64)))
		pk /= float64(k)
	}
}()

// poissonTop[c] is the Poisson(1) draw of every 64-bit uniform whose top
// 12 bits are c, or poissonSplit when the cell straddles a step of the CDF.
var poissonTop = func() (out [1 << 12]uint8) {
	for c := range out {
		lo, hi := uint64(c)<<52, uint64(c)<<52|(1<<52-1)
		if a, b := poissonInvert(lo), poissonInvert(hi); a == b {
			out[c] = uint8(a)
		} else {
			out[c] = poissonSplit
		}
	}
	return out
}()

const poissonSplit = 255

// poissonInvert is the Poisson(1) draw of the 64-bit uniform u: the least
// k with u < P(X ≤ k)·2⁶⁴.
func poissonInvert(u uint64) int32 {
	k := int32(0)
	for int(k) < len(poissonCDF) && u >= poissonCDF[k] {
		k++
	}
	return k
}

// shuffle permutes t uniformly (Fisher–Yates), drawing each index by
// Lemire's exact multiply-and-reject from half of a 64-bit random number.
func shuffle(r *rand.Rand, t []int32) {
	i := len(t) - 1
	for ; i >= math.MaxUint32; i-- {
		j := r.IntN(i + 1)
		t[i], t[j] = t[j], t[i]
	}
	var bits uint64
	half := false
	u32 := func() uint32 {
		if half {
			half = false
			return uint32(bits >> 32)
		}
		bits, half = r.Uint64(), true
		return uint32(bits)
	}
	for ; i > 0; i-- {
		bound := uint32(i + 1)
		m := uint64(u32()) * uint64(bound)
		if uint32(m) < bound {
			for floor := -bound % bound; uint32(m) < floor; {
				m = uint64(u32()) * uint64(bound)
			}
		}
		j := m >> 32
		t[i], t[j] = t[j], t[i]
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// shuffle summarises L when the source tags are permuted across rows, with
// measurements and labels held fixed. The half-and-half rating reads the
// source's yes-rate, so its headline is recomputed per shuffle; a trained
// detector is retrained on the shuffled tags (same folds) when
// opt.ShuffleRetrain allows, else its headline is held at the observed value.
func (d *data) shuffle(rep *Report, opt Options, folds []int) *Shuffle {
	out := &Shuffle{N: opt.Shuffles, Observed: rep.L}
	recompute := opt.Detector == DetectorMeanHalf || opt.Detector == DetectorEach
	trained := opt.Detector == DetectorRF || opt.Detector == DetectorLogReg
	retrain := trained && folds != nil && (opt.ShuffleRetrain == "always" ||
		(opt.ShuffleRetrain != "never" && opt.Detector == DetectorLogReg && len(d.y)*opt.Shuffles <= 5e6))
	switch {
	case recompute:
		out.Headline = "recomputed per shuffle: the half-and-half rating reads the shuffled source's yes-rate"
	case retrain:
		out.Headline = "recomputed per shuffle: the detector is retrained out of fold on the shuffled tags (same folds)"
	case opt.Detector == DetectorFixed:
		out.Headline = "unchanged: the fixed rating does not read the source"
	default:
		out.Headline = "held at the observed headline: the detector is not retrained per shuffle (too costly here; see ShuffleRetrain)"
	}
	fitOpt := opt
	fitOpt.Workers = 1 // shuffles already run in parallel
	fitOpt.Progress = nil
	k := len(d.sources)
	// The tags are shuffled over positions: rows in ascending mean
	// measurement when the half-and-half headline is recomputed (so each
	// source's rows stay in rating order, see meanHalfSorter), else rows in
	// their own order. Either way a shuffle is a uniform permutation of the
	// tags over the rows.
	var mh *meanHalfSorter
	order := make([]int32, len(d.y))
	for i := range order {
		order[i] = int32(i)
	}
	if recompute {
		mh = newMeanHalfSorter(d)
		order = mh.order
	}
	tags0 := make([]int32, len(order))
	yes := make([]uint8, len(order))
	for p, i := range order {
		tags0[p] = d.src[i]
		if d.y[i] {
			yes[p] = 1
		}
	}
	type scratch struct {
		tags     []int32
		pos, neg []int
		merge    *mergeScratch
	}
	work := make([]scratch, opt.Workers)
	for w := range work {
		work[w] = scratch{tags: make([]int32, len(tags0)), pos: make([]int, k), neg: make([]int, k)}
		if recompute {
			work[w].merge = mh.scratch(k)
		}
	}
	ls := make([]float64, opt.Shuffles)
	parallel(opt.Shuffles, opt.Workers, func(w, s int) {
		sc := work[w]
		copy(sc.tags, tags0)
		r := rand.New(rand.NewPCG(opt.Seed, 0x5bff1e+uint64(s)))
		shuffle(r, sc.tags)
		clear(sc.pos)
		clear(sc.neg)
		for p, kk := range sc.tags {
			if yes[p] == 1 {
				sc.pos[kk]++
			} else {
				sc.neg[kk]++
			}
		}
		so := sourceOnlyAUC(sc.pos, sc.neg)
		h := rep.Headline
		switch {
		case recompute:
			h = mh.auc(sc.tags, sc.pos, sc.neg, sc.merge)
		case retrain:
			dd := *d
			dd.src = sc.tags // rows in their own order here
			if oof, err := dd.outOfFold(folds, true, fitOpt); err == nil {
				h, _ = stats.ROCAUC(d.y, oof)
			} else {
				h = math.NaN()
			}
		}
		if !(h > 0) {
			// A retrained headline of 0 (every no row above every yes
			// row, possible on a few rows) leaves L undefined.
			h = math.NaN()
		}
		ls[s] = so / h
	})
	kept := ls[:0]
	for _, l := range ls {
		if !math.IsNaN(l) {
			kept = append(kept, l)
		}
	}
	if dropped := len(ls) - len(kept); dropped > 0 {
		out.Headline += fmt.Sprintf("; %d shuffles left out because the detector could not be fitted or its headline was 0, leaving L undefined", dropped)
	}
	ls = kept
	out.N = len(ls)
	if len(ls) == 0 {
		return out
	}
	var sum float64
	var atLeast int
	for _, l := range ls {
		sum += l
		if l >= rep.L-eps {
			atLeast++
		}
	}
	slices.Sort(ls)
	out.Mean = sum / float64(len(ls))
	out.P99 = stats.Quantile(ls, 0.99)
	out.Max = ls[len(ls)-1]
	out.AtLeastObs = float64(atLeast) / float64(len(ls))
	return out
}

// FingerprintRows is the most rows the source fingerprint is measured on.
const FingerprintRows = 20_000

// fingerprint measures how well the measurements alone predict the source:
// an out-of-fold multi-class random forest, scored by the macro one-vs-rest
// AUC. A high value means "tag covered" cannot hide the source.
func (d *data) fingerprint(opt Options) (*Fingerprint, error) {
	k := len(d.sources)
	// Folds stratified by source, dealt round-robin in a seeded order. A
	// large pool is measured on a seeded sample of FingerprintRows rows
	// (the first rows of that order, so the sample is stratified too): a
	// forest over many sources keeps class shares per leaf, which on
	// hundreds of thousands of rows runs to gigabytes.
	r := rand.New(rand.NewPCG(opt.Seed, 0xf1a9e7))
	perm := r.Perm(len(d.src))
	sampled := len(perm) > FingerprintRows
	if sampled {
		perm = perm[:FingerprintRows]
		slices.Sort(perm)
	}
	fold := make([]int, len(perm))
	next := make([]int, k)
	for j, i := range perm {
		fold[j] = next[d.src[i]] % opt.Folds
		next[d.src[i]]++
	}
	src := make([]int, len(perm))
	for j, i := range perm {
		src[j] = int(d.src[i])
	}
	// The sampled rows' measurements, row by row.
	p := len(d.cols)
	flat := make([]float64, len(perm)*p)
	xs := make([][]float64, len(perm))
	for j, i := range perm {
		xs[j] = flat[j*p : (j+1)*p : (j+1)*p]
		for m, col := range d.cols {
			xs[j][m] = col[i]
		}
	}
	probs := make([][]float64, len(perm))
	for f := range opt.Folds {
		var tx [][]float64
		var ty []int
		for j, i := range perm {
			if fold[j] != f {
				tx = append(tx, xs[j])
				ty = append(ty, int(d.src[i]))
			}
		}
		if len(tx) == 0 {
			return nil, fmt.Errorf("fold %d has no training rows", f+1)
		}
		m, err := stats.FitForest(tx, ty, k, stats.ForestOptions{
			Trees: opt.FingerprintTrees, Seed: opt.Seed*1000 + 500 + uint64(f), Workers: opt.Workers,
			// A diagnostic, not a detector: leaves of at least 5 rows keep
			// trees over many sources small and probabilities smooth.
			MinLeaf: 5,
		})
		if err != nil {
			return nil, err
		}
		for j := range perm {
			if fold[j] == f {
				probs[j] = m.PredictProba(xs[j])
			}
		}
	}
	auc, err := stats.MacroOneVsRestAUC(src, probs)
	if err != nil {
		return nil, err
	}
	on := "the measurements alone"
	if sampled {
		on = fmt.Sprintf("the measurements alone of a seeded sample of %d of the %d rows", FingerprintRows, len(d.src))
	}
	return &Fingerprint{
		MacroAUC: auc,
		Warn:     auc >= opt.FingerprintWarn,
		Method:   fmt.Sprintf("out-of-fold random forest (%d trees, leaves ≥ 5 rows, %d folds stratified by source) on %s; warning at %.2f, GlossoBench's choice", opt.FingerprintTrees, opt.Folds, on, opt.FingerprintWarn),
	}, nil
}

// repairs computes the repairs the paper lists, on the headline ratings.
func (d *data) repairs(headline []float64) *Repairs {
	out := &Repairs{Note: "listed, not tested: the paper lists these repairs and did not test them"}
	for k, s := range d.sources {
		var y []bool
		var r []float64
		for i := range d.y {
			if int(d.src[i]) == k {
				y = append(y, d.y[i])
				r = append(r, headline[i])
			}
		}
		a, err := stats.ROCAUC(y, r)
		if err != nil {
			out.PerSource = append(out.PerSource, SourceAUC{Source: s, Skip: "one class in this source"})
		} else {
			out.PerSource = append(out.PerSource, SourceAUC{Source: s, AUC: a})
		}
	}

	// Reweight so every source has the pooled yes-rate; a source with one
	// class cannot be, and is left out.
	target := float64(d.nPos) / float64(len(d.y))
	w := make([]float64, len(d.y))
	var left []string
	for i := range d.y {
		k := d.src[i]
		if d.pos[k] == 0 || d.neg[k] == 0 {
			continue
		}
		rk := rate(d.pos[k], d.neg[k])
		if d.y[i] {
			w[i] = target / rk
		} else {
			w[i] = (1 - target) / (1 - rk)
		}
	}
	for k, s := range d.sources {
		if d.pos[k] == 0 || d.neg[k] == 0 {
			left = append(left, s)
		}
	}
	if a, err := stats.WeightedROCAUC(d.y, headline, w); err == nil {
		out.Reweighted = &a
	}
	if len(left) > 0 {
		out.Reweight = "sources with one class cannot be reweighted and are left out: " + strings.Join(left, ", ")
	}

	// Per-source level: subtract each source's mean rating.
	sum := make([]float64, len(d.sources))
	for i, k := range d.src {
		sum[k] += headline[i]
	}
	level := make([]float64, len(d.y))
	for i, k := range d.src {
		level[i] = headline[i] - sum[k]/float64(d.pos[k]+d.neg[k])
	}
	if a, err := stats.ROCAUC(d.y, level); err == nil && !math.IsNaN(a) {
		out.Level = a
	}
	return out
}

// meanHalfSorter computes the AUC of the half-and-half rating under many
// tag shuffles without sorting the rows each time: inside one source the
// rating orders rows by their mean measurement, so with the rows sorted
// once by mean (their positions), the positions split by source stay
// sorted, and one k-way merge of the sources by rating reads the AUC.
type meanHalfSorter struct {
	order []int32   // the row at each position: rows by ascending mean measurement
	yes   []uint8   // by position, 1 for a yes row
	half  []float64 // by position, half the row's mean measurement
}

// mergeScratch is one worker's space for meanHalfSorter.auc.
type mergeScratch struct {
	keys      []uint64 // ratings as orderKey, grouped by source, ascending in each
	labs      []uint8
	head, end []int     // per source (padded to a power of two), its next and end in keys
	rate      []float64 // per source, half its yes-rate
	cur       []uint64  // per padded source, the key at its head; done when none is left
	// The merge's loser tree (the source at each node and its key), and
	// its winners while it is built.
	loser, winner    []int32
	loserKey, winKey []uint64
}

// orderKey maps a finite rating to an integer in the same order, equal
// ratings (0 and -0 too) to the same integer, and never to 0 or done.
func orderKey(v float64) uint64 {
	if v == 0 {
		v = 0 // -0 and 0 are one rating
	}
	u := math.Float64bits(v)
	if u>>63 == 1 {
		return ^u
	}
	return u | 1<<63
}

// lessMask is 1 when a < b, else 0 (compiled without a branch).
func lessMask(a, b uint64) uint64 {
	var m uint64
	if a < b {
		m = 1
	}
	return m
}

// done is the key of an exhausted source in the merge, above every rating.
const done = math.MaxUint64

func newMeanHalfSorter(d *data) *meanHalfSorter {
	means := d.rowMeans()
	m := &meanHalfSorter{order: make([]int32, len(d.y)), yes: make([]uint8, len(d.y)), half: make([]float64, len(d.y))}
	for i := range m.order {
		m.order[i] = int32(i)
	}
	slices.SortStableFunc(m.order, func(a, b int32) int { return cmpFloat(means[a], means[b]) })
	for p, i := range m.order {
		m.half[p] = 0.5 * means[i] // as in meanHalf, so ratings are equal to the bit
		if d.y[i] {
			m.yes[p] = 1
		}
	}
	return m
}

func (m *meanHalfSorter) scratch(k int) *mergeScratch {
	leaves := 1
	for leaves < k {
		leaves *= 2
	}
	return &mergeScratch{
		keys: make([]uint64, len(m.yes)), labs: make([]uint8, len(m.yes)),
		head: make([]int, leaves), end: make([]int, leaves), rate: make([]float64, k),
		cur: make([]uint64, leaves), loser: make([]int32, leaves), winner: make([]int32, 2*leaves),
		loserKey: make([]uint64, leaves), winKey: make([]uint64, 2*leaves),
	}
}

// auc is the AUC of the half-and-half rating when position p has source
// tags[p], with pos and neg the yes and no rows per source under those tags.
func (m *meanHalfSorter) auc(tags []int32, pos, neg []int, sc *mergeScratch) float64 {
	leaves := len(sc.cur)
	off := 0
	for k := range leaves {
		sc.head[k] = off
		if k < len(pos) {
			if pos[k]+neg[k] > 0 {
				sc.rate[k] = 0.5 * rate(pos[k], neg[k])
			}
			off += pos[k] + neg[k]
		}
		sc.end[k] = off
	}
	// Deal the positions into their sources' runs, rated; each run stays
	// ascending because positions are. head[k] runs to end[k] meanwhile.
	for p, k := range tags {
		q := sc.head[k]
		sc.keys[q] = orderKey(sc.rate[k] + m.half[p])
		sc.labs[q] = m.yes[p]
		sc.head[k] = q + 1
	}
	for k := range leaves {
		sc.head[k] = 0
		if k > 0 {
			sc.head[k] = sc.end[k-1]
		}
		if sc.head[k] < sc.end[k] {
			sc.cur[k] = sc.keys[sc.head[k]]
		} else {
			sc.cur[k] = done
		}
	}
	// A loser tree: node i (1 ≤ i < leaves) keeps the loser of the match
	// between its subtrees (its key and source), so each step replays one
	// leaf-to-root path of log₂(sources) comparisons. Keys are the ratings'
	// order-preserving integer images, which lets the comparisons compile
	// to conditional moves instead of unpredictable branches.
	w, wk := sc.winner, sc.winKey
	for k := range leaves {
		w[leaves+k], wk[leaves+k] = int32(k), sc.cur[k]
	}
	for i := leaves - 1; i >= 1; i-- {
		a, b := 2*i, 2*i+1
		if wk[b] < wk[a] {
			a, b = b, a
		}
		w[i], wk[i] = w[a], wk[a]
		sc.loser[i], sc.loserKey[i] = w[b], wk[b]
	}
	k, v := w[1], wk[1]
	if leaves == 1 {
		k, v = 0, sc.cur[0]
	}
	lkey, lsrc := sc.loserKey, sc.loser
	// Twice the Mann–Whitney sum, in integers, one tie group at a time.
	var sum, negBelow, gp, gn int64
	prev := uint64(0) // below every finite rating's key
	for range len(tags) {
		if v != prev {
			sum += gp * (2*negBelow + gn)
			negBelow += gn
			gp, gn, prev = 0, 0, v
		}
		q := sc.head[k]
		y := int64(sc.labs[q])
		gp += y
		gn += 1 - y
		q++
		sc.head[k] = q
		v = done
		if q < sc.end[k] {
			v = sc.keys[q]
		}
		for i := (int(k) + leaves) >> 1; i > 0; i >>= 1 {
			// Swap the climber and the node's loser when the loser is
			// lower, by masks rather than a branch.
			lk, li := lkey[i], lsrc[i]
			m := -lessMask(lk, v)
			dk := (lk ^ v) & m
			di := (li ^ k) & int32(m)
			lkey[i], lsrc[i] = lk^dk, li^di
			v, k = v^dk, k^di
		}
	}
	sum += gp * (2*negBelow + gn)
	negBelow += gn
	var nPos int64
	for _, p := range pos {
		nPos += int64(p)
	}
	return float64(sum) / (2 * float64(nPos) * float64(negBelow))
}
