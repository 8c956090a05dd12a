package scorers

import (
	"fmt"
	"strings"
)

// Extra is a secondary measure a run adds to an axis's scores beside its
// plugin's (the judge overlay's judge_quality, scorers/judge): it sees each
// scored item with its prediction, may add to its score's fields and audit
// rows, and publishes into the axis result.
type Extra interface {
	Add(s *ItemScore, p Prediction, it Item)
	Publish(r *AxisResult)
}

// Scoring scores one axis a shard at a time with its plugin's Tally and adds
// what every axis publishes: per-register scores and the register mix
// (spec §0, principle 4) when the data labels registers, and the
// translation delta of each dataset declared a translation of another.
type Scoring struct {
	ax     Axis
	ac     AxisConfig
	opt    ScoreOptions
	tally  Tally
	regs   registerTally
	deltas deltaScores
	extra  Extra
	// Answered counts the items handed to Add; Given, those scored.
	Answered, Given int
}

// NewScoring starts scoring the axis; extra may be nil.
func NewScoring(ax Axis, ac AxisConfig, opt ScoreOptions, extra Extra) (*Scoring, error) {
	tally, err := ax.Tally(opt)
	if err != nil {
		return nil, err
	}
	s := &Scoring{ax: ax, ac: ac, opt: opt, tally: tally, extra: extra, deltas: deltaScores{datasets: map[string]bool{}, scores: map[string]float64{}}}
	for _, ds := range ac.Datasets {
		if ds.TranslationOf != "" {
			s.deltas.datasets[ds.Name], s.deltas.datasets[ds.TranslationOf] = true, true
		}
	}
	return s, nil
}

// Add scores one shard (preds[i] belongs to items[i]) and returns its item
// scores, for the caller to write out.
func (s *Scoring) Add(items []Item, preds []Prediction) ([]ItemScore, error) {
	scores, err := s.tally.Add(items, preds)
	if err != nil {
		return nil, err
	}
	s.Answered += len(items)
	s.Given += len(scores)
	at := make(map[string]int, len(items))
	for i, it := range items {
		at[it.ID] = i
	}
	for i := range scores {
		sc := &scores[i]
		k := at[sc.ItemID]
		s.regs.add(items[k].Register, sc.Score)
		s.deltas.add(sc)
		if s.extra != nil {
			s.extra.Add(sc, preds[k], items[k])
		}
	}
	return scores, nil
}

// Result is the axis result over every shard added; an axis with no item
// answered has no score.
func (s *Scoring) Result() (AxisResult, error) {
	if s.Answered == 0 {
		return AxisResult{Axis: s.ax.Name(), Version: s.ax.Version(), ScorerType: s.ax.ScorerType(), Metric: "none",
			Notes: []string{"no item was scored"}}, nil
	}
	r, err := s.tally.Result()
	if err != nil {
		return AxisResult{}, err
	}
	s.regs.publish(&r)
	s.deltas.publish(&r, s.ac, s.opt)
	if s.extra != nil {
		s.extra.Publish(&r)
	}
	return r, nil
}

// registerTally reports per-register scores and the register mix when the
// data labels registers; otherwise it adds nothing.
type registerTally struct {
	sum      map[string]float64
	n        map[string]int
	labelled bool
	total    int
}

func (t *registerTally) add(register string, score float64) {
	if t.sum == nil {
		t.sum, t.n = map[string]float64{}, map[string]int{}
	}
	t.total++
	if register == "" {
		register = "unlabelled"
	} else {
		t.labelled = true
	}
	t.sum[register] += score
	t.n[register]++
}

func (t *registerTally) publish(r *AxisResult) {
	if !t.labelled {
		return
	}
	by, mix := map[string]float64{}, map[string]float64{}
	for g, k := range t.n {
		by[g] = t.sum[g] / float64(k)
		mix[g] = float64(k) / float64(t.total)
	}
	if r.Secondary == nil {
		r.Secondary = map[string]any{}
	}
	r.Secondary["by_register"], r.Secondary["register_mix"] = by, mix
}

// deltaScores keeps the item scores of the datasets that are translations
// of others, and of their originals, for translation_delta.
type deltaScores struct {
	datasets map[string]bool
	scores   map[string]float64
}

func (d *deltaScores) add(s *ItemScore) {
	if ds, _, ok := strings.Cut(s.ItemID, "/"); ok && d.datasets[ds] {
		d.scores[s.ItemID] = s.Score
	}
}

// publish adds, for every dataset declared the translation of another, the
// translated-minus-original score on the rows both scored.
func (d *deltaScores) publish(r *AxisResult, ac AxisConfig, opt ScoreOptions) {
	for _, ds := range ac.Datasets {
		if ds.TranslationOf == "" {
			continue
		}
		delta, err := DeltaOf(d.scores, r.Axis, ds.TranslationOf, ds.Name, opt.BootstrapResamples, uint64(opt.Seed))
		if err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("translation_delta %s vs %s: %v", ds.Name, ds.TranslationOf, err))
			continue
		}
		r.TranslationDelta = append(r.TranslationDelta, delta)
	}
}
