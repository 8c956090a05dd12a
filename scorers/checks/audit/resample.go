package audit

import (
	"fmt"
	"math"
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
func bootstrapCI(y []bool, ratings []float64, resamples int, seed uint64, workers int) [2]float64 {
	n := len(y)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmpFloat(ratings[a], ratings[b]) })
	// Rows are drawn as their positions in rating order, so that counting
	// a resample's AUC reads its counts in sequence. group[p] is the tie
	// group of position p; starts[g] where group g begins.
	var starts []int32
	var posAt, negAt []int32 // positions of the yes and the no rows
	for p, i := range order {
		if p == 0 || ratings[i] != ratings[order[p-1]] {
			starts = append(starts, int32(p))
		}
		if y[i] {
			posAt = append(posAt, int32(p))
		} else {
			negAt = append(negAt, int32(p))
		}
	}
	starts = append(starts, int32(n))
	type scratch struct{ pos, neg []int32 }
	work := make([]scratch, workers)
	for w := range work {
		work[w] = scratch{make([]int32, n), make([]int32, n)}
	}
	vals := make([]float64, resamples)
	parallel(resamples, workers, func(w, b int) {
		cp, cn := work[w].pos, work[w].neg
		clear(cp)
		clear(cn)
		r := rand.New(rand.NewPCG(seed, 0xb0075742+uint64(b)))
		for range posAt {
			cp[posAt[r.IntN(len(posAt))]]++
		}
		for range negAt {
			cn[negAt[r.IntN(len(negAt))]]++
		}
		var sum, negBelow float64
		for g := 0; g+1 < len(starts); g++ {
			var gp, gn int64
			for p := starts[g]; p < starts[g+1]; p++ {
				gp += int64(cp[p])
				gn += int64(cn[p])
			}
			sum += float64(gp) * (negBelow + float64(gn)/2)
			negBelow += float64(gn)
		}
		vals[b] = sum / (float64(len(posAt)) * negBelow)
	})
	slices.Sort(vals)
	return [2]float64{stats.Quantile(vals, 0.025), stats.Quantile(vals, 0.975)}
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
	type scratch struct {
		src      []int
		pos, neg []int
		merge    *mergeScratch
	}
	var mh *meanHalfSorter
	if recompute {
		mh = newMeanHalfSorter(d)
	}
	work := make([]scratch, opt.Workers)
	for w := range work {
		work[w] = scratch{make([]int, len(d.src)), make([]int, k), make([]int, k), nil}
		if recompute {
			work[w].merge = mh.scratch(k)
		}
	}
	ls := make([]float64, opt.Shuffles)
	parallel(opt.Shuffles, opt.Workers, func(w, s int) {
		sc := work[w]
		copy(sc.src, d.src)
		r := rand.New(rand.NewPCG(opt.Seed, 0x5bff1e+uint64(s)))
		r.Shuffle(len(sc.src), func(a, b int) { sc.src[a], sc.src[b] = sc.src[b], sc.src[a] })
		clear(sc.pos)
		clear(sc.neg)
		for i, kk := range sc.src {
			if d.y[i] {
				sc.pos[kk]++
			} else {
				sc.neg[kk]++
			}
		}
		so := sourceOnlyAUC(sc.pos, sc.neg)
		h := rep.Headline
		switch {
		case recompute:
			h = mh.auc(sc.src, sc.pos, sc.neg, sc.merge)
		case retrain:
			dd := *d
			dd.src = sc.src
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
		src[j] = d.src[i]
	}
	probs := make([][]float64, len(perm))
	for f := range opt.Folds {
		var tx [][]float64
		var ty []int
		for j, i := range perm {
			if fold[j] != f {
				tx = append(tx, d.x[i])
				ty = append(ty, d.src[i])
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
		for j, i := range perm {
			if fold[j] == f {
				probs[j] = m.PredictProba(d.x[i])
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
			if d.src[i] == k {
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
// rating orders rows by their mean measurement, so the rows sorted once by
// mean are split by source (each part stays sorted) and the parts are
// merged by rating.
type meanHalfSorter struct {
	y      []bool
	means  []float64
	byMean []int32
}

type mergeScratch struct {
	buf        []int32
	start, end []int
	rate       []float64
	heap       []head
}

// head is a source's next row in the merge, keyed by its rating.
type head struct {
	v float64
	k int
}

func newMeanHalfSorter(d *data) *meanHalfSorter {
	m := &meanHalfSorter{y: d.y, means: d.rowMeans(), byMean: make([]int32, len(d.y))}
	for i := range m.byMean {
		m.byMean[i] = int32(i)
	}
	slices.SortStableFunc(m.byMean, func(a, b int32) int { return cmpFloat(m.means[a], m.means[b]) })
	return m
}

func (m *meanHalfSorter) scratch(k int) *mergeScratch {
	return &mergeScratch{buf: make([]int32, len(m.y)), start: make([]int, k), end: make([]int, k), rate: make([]float64, k), heap: make([]head, 0, k)}
}

func (m *meanHalfSorter) auc(src, pos, neg []int, sc *mergeScratch) float64 {
	off := 0
	for k := range pos {
		sc.start[k], sc.end[k] = off, off
		off += pos[k] + neg[k]
		if pos[k]+neg[k] > 0 {
			sc.rate[k] = rate(pos[k], neg[k])
		}
	}
	for _, i := range m.byMean {
		k := src[i]
		sc.buf[sc.end[k]] = i
		sc.end[k]++
	}
	// Reset end to the bucket limits and start to the heads.
	for k := range pos {
		sc.end[k] = sc.start[k] + pos[k] + neg[k]
	}
	key := func(k int) float64 { return 0.5*sc.rate[k] + 0.5*m.means[sc.buf[sc.start[k]]] }
	h := sc.heap[:0]
	less := func(a, b int) bool { return h[a].v < h[b].v }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			c := l
			if r := l + 1; r < len(h) && less(r, l) {
				c = r
			}
			if !less(c, i) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for k := range pos {
		if sc.start[k] < sc.end[k] {
			h = append(h, head{key(k), k})
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	var sum, negBelow, gp, gn float64
	prev := math.Inf(-1)
	for len(h) > 0 {
		k, v := h[0].k, h[0].v
		if v != prev {
			sum += gp * (negBelow + gn/2)
			negBelow += gn
			gp, gn, prev = 0, 0, v
		}
		if m.y[sc.buf[sc.start[k]]] {
			gp++
		} else {
			gn++
		}
		sc.start[k]++
		if sc.start[k] == sc.end[k] {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		} else {
			h[0].v = key(k)
		}
		down(0)
	}
	sum += gp * (negBelow + gn/2)
	negBelow += gn
	var nPos float64
	for _, p := range pos {
		nPos += float64(p)
	}
	return sum / (nPos * negBelow)
}
