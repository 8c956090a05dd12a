package nlg

import (
	"encoding/json"
	"fmt"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/chrf"
)

// Tally starts scoring the axis one shard at a time. The NLG axis has no
// scoring options, so it never fails.
func (Axis) Tally(opt scorers.ScoreOptions) (scorers.Tally, error) {
	resamples := opt.BootstrapResamples
	if resamples <= 0 {
		resamples = defaultResamples
	}
	m := chrf.New(chrf.ChrFPlusPlus)
	o := m.Options()
	width := 3 * (o.CharOrder + o.WordOrder)
	return &tally{
		m: m, width: width, resamples: resamples, seed: opt.Seed,
		corpus:     make(chrf.Stats, width),
		copySource: make(chrf.Stats, width),
		byDir:      map[string]*dirTotal{},
	}, nil
}

// tally accumulates the axis over shards. Every corpus number (the headline,
// each direction's score, the copy-source baseline) is the F-score of chrF
// statistics summed over segments, so those are running sums; the bootstrap
// resamples segments, so each segment's statistics are kept, in the order
// the items were added. A segment's statistics depend only on its own
// hypothesis and non-empty references (chrf skips the "" that pad shorter
// reference lists), so a shard padded to its own largest reference count
// gives the same statistics as the whole axis padded to the axis's.
type tally struct {
	m         *chrf.CHRF
	width     int // ints per segment's statistics
	resamples int
	seed      int64

	n, truncated, empty, unlabelled int
	// segs holds segment i's statistics at segs[i*width:(i+1)*width]: one
	// flat slice without pointers, which the GC need not scan.
	segs        []int
	corpus      chrf.Stats // the hypotheses' statistics, summed
	copySource  chrf.Stats // the sources' statistics against the references, summed
	byDir       map[string]*dirTotal
	sentenceSum float64 // sentence chrF++ (0–1) summed in item order
	// nrefs is the number of non-empty references per segment, as chrf
	// counts it for the signature: that of the first segment, or -1 once
	// two segments differ.
	nrefs   int
	metricx metricxTally
}

// dirTotal is one direction's summed statistics and item count.
type dirTotal struct {
	sum chrf.Stats
	n   int
}

// Add scores one shard. It checks the whole shard before changing the
// tally, so a shard that fails leaves the tally as it was.
func (t *tally) Add(items []scorers.Item, preds []scorers.Prediction) ([]scorers.ItemScore, error) {
	if len(items) != len(preds) {
		return nil, fmt.Errorf("nlg: %d items but %d predictions", len(items), len(preds))
	}
	// Positions in errors count from the start of the axis, as when it is
	// scored whole.
	exs := make([]extra, len(items))
	nrefs := 0 // the shard's longest reference list
	for i, it := range items {
		if preds[i].ItemID != it.ID {
			return nil, fmt.Errorf("nlg: prediction %d is for item %q, expected %q", t.n+i, preds[i].ItemID, it.ID)
		}
		if err := json.Unmarshal(it.Extra, &exs[i]); err != nil {
			return nil, fmt.Errorf("nlg: item %s: bad extra: %w", it.ID, err)
		}
		if len(it.References) == 0 {
			return nil, fmt.Errorf("nlg: item %s has no reference", it.ID)
		}
		nrefs = max(nrefs, len(it.References))
	}
	for i, it := range items {
		if nonEmpty(it.References) == 0 {
			return nil, fmt.Errorf("nlg: %w (segment %d)", chrf.ErrNoReference, t.n+i+1)
		}
	}
	if len(items) == 0 {
		return nil, nil
	}

	hyps := make([]string, len(items))
	sources := make([]string, len(items))
	streams := make([][]string, nrefs)
	for k := range streams {
		streams[k] = make([]string, len(items)) // "" where an item has fewer references
	}
	flags := make([]string, len(items))
	labelled := make([]bool, len(items))
	truncated, empty, unlabelled := 0, 0, 0
	for i, it := range items {
		p := preds[i]
		for k, r := range it.References {
			streams[k][i] = r
		}
		sources[i] = exs[i].Source
		switch {
		case p.Unsupported || p.Error != "" || len(p.Generations) == 0:
			flags[i] = "no_output"
		default:
			g := p.Generations[0]
			hyps[i], labelled[i] = ExtractTranslation(g.Text, exs[i].AnswerTag)
			if g.Truncated() {
				truncated++
				flags[i] = "truncated"
			}
		}
		if hyps[i] == "" {
			empty++
			if flags[i] == "" {
				flags[i] = "empty"
			}
		} else if !labelled[i] {
			unlabelled++
			if flags[i] == "" {
				flags[i] = "no_label"
			}
		}
	}
	segs, err := t.m.SegmentStats(hyps, streams)
	if err != nil {
		return nil, fmt.Errorf("nlg: %w", err)
	}
	// Copying the source untranslated is the do-nothing baseline: names,
	// numbers and loanwords already earn some chrF++.
	copySegs, err := t.m.SegmentStats(sources, streams)
	if err != nil {
		return nil, fmt.Errorf("nlg: %w", err)
	}

	t.truncated += truncated
	t.empty += empty
	t.unlabelled += unlabelled
	scores := make([]scorers.ItemScore, len(items))
	for i, it := range items {
		switch k := nonEmpty(it.References); {
		case t.n+i == 0:
			t.nrefs = k
		case t.nrefs != k:
			t.nrefs = -1
		}
		t.segs = append(t.segs, segs[i]...)
		t.corpus.Add(segs[i])
		t.copySource.Add(copySegs[i])
		d := t.byDir[exs[i].Direction]
		if d == nil {
			d = &dirTotal{sum: make(chrf.Stats, t.width)}
			t.byDir[exs[i].Direction] = d
		}
		d.sum.Add(segs[i])
		d.n++

		s := t.m.FScore(segs[i]) / 100
		t.sentenceSum += s
		scores[i] = scorers.ItemScore{
			ItemID: it.ID, Source: it.Source, Lang: it.Lang,
			Score: s, Rating: s, Label: s >= LabelThreshold, Flagged: flags[i],
			Fields: map[string]any{
				"direction":   exs[i].Direction,
				"chrf++":      100 * s,
				"hypothesis":  hyps[i],
				"label_found": labelled[i],
				"label_rule":  fmt.Sprintf("sentence chrF++ >= %.2f", LabelThreshold),
				StatsField:    segs[i],
			},
		}
	}
	t.n += len(items)
	t.metricx.add(exs, sources, hyps, streams[0], scores)
	return scores, nil
}

// Result is the axis result over every shard added.
func (t *tally) Result() (scorers.AxisResult, error) {
	res := scorers.AxisResult{Axis: "nlg", Version: Version, Metric: Metric, ScorerType: scorers.ScorerRule, N: t.n}
	if t.n == 0 {
		res.Notes = append(res.Notes, "no items to score")
		return res, nil
	}
	corpus := t.m.FScore(t.corpus) / 100
	res.Score = &corpus
	res.TruncationRate = float64(t.truncated) / float64(t.n)
	scorers.WarnTruncation(&res)

	ci, err := scorers.HeadlineCI(res.Metric, t.n, func(i int) scorers.ItemScore {
		return scorers.ItemScore{Fields: map[string]any{StatsField: chrf.Stats(t.segs[i*t.width : (i+1)*t.width])}}
	}, t.resamples, uint64(t.seed))
	if err == nil {
		res.CI95 = ci
	} else {
		res.Notes = append(res.Notes, "no CI: "+err.Error())
	}

	dirs := make(map[string]any, len(t.byDir))
	for d, tot := range t.byDir {
		dirs[d] = map[string]any{"score": t.m.FScore(tot.sum) / 100, "n": tot.n}
	}
	res.Secondary = map[string]any{
		"chrf++_sacrebleu":   100 * corpus, // the 0–100 number sacrebleu prints
		"signature":          "chrF2++|" + signature(t.m, t.nrefs),
		"by_direction":       dirs,
		"copy_source_chrf++": t.m.FScore(t.copySource) / 100,
		// Item scores are sentence chrF++; their mean is not the corpus score.
		"mean_sentence_chrf++": t.sentenceSum / float64(t.n),
		"empty_outputs":        t.empty,
		"unlabelled_outputs":   t.unlabelled,
		"bootstrap_resamples":  t.resamples,
	}
	res.Notes = append(res.Notes, t.metricx.result(res.Secondary))
	res.Notes = append(res.Notes, "score and CI are corpus chrF++ / 100 (0–1); chance is 0 because chrF++ has no random-answer baseline, see copy_source_chrf++")
	return res, nil
}

// nonEmpty counts the references chrf scores against: the non-empty ones.
func nonEmpty(refs []string) int {
	n := 0
	for _, r := range refs {
		if r != "" {
			n++
		}
	}
	return n
}

// signature is sacrebleu's signature of a corpus whose segments all have
// nrefs non-empty references (-1: not all the same number). chrf writes a
// signature only for a corpus it scores, and it depends on nothing but the
// reference counts, so this scores a two-segment stand-in with those counts
// rather than copy chrf's format here.
func signature(m *chrf.CHRF, nrefs int) string {
	counts := []int{nrefs, nrefs}
	if nrefs < 0 {
		counts = []int{1, 2}
	}
	streams := make([][]string, max(counts[0], counts[1]))
	for k := range streams {
		streams[k] = make([]string, len(counts))
		for i, c := range counts {
			if k < c {
				streams[k][i] = "x"
			}
		}
	}
	return m.Corpus(make([]string, len(counts)), streams).Signature
}
