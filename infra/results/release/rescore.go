package release

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/chrf"
	"github.com/glossobench/glossobench/scorers/nlg"

	// The axis plugins register their headline statistics.
	_ "github.com/glossobench/glossobench/scorers/ifeval"
	_ "github.com/glossobench/glossobench/scorers/mcq"
	_ "github.com/glossobench/glossobench/scorers/mt"
	_ "github.com/glossobench/glossobench/scorers/safety"
	"github.com/glossobench/glossobench/stats"
)

// Tolerance is how far a rescored number may sit from the published one and
// still count as reproduced. The same sums in the same order give the same
// bits; the tolerance only absorbs a different summation order.
const Tolerance = 1e-12

// Check statuses.
const (
	StatusExact      = "exact"
	StatusWithin     = "within tolerance"
	StatusDiffers    = "DIFFERS"
	StatusNotChecked = "not rescorable"
	StatusNoScore    = "no score published"
)

// Check is one re-derived number.
type Check struct {
	Name      string   `json:"name"`
	Method    string   `json:"method"`
	Published *float64 `json:"published"`
	Rescored  *float64 `json:"rescored"`
	Status    string   `json:"status"`
	Detail    string   `json:"detail,omitempty"`
}

// RescoreReport is every check Rescore made.
type RescoreReport struct {
	Axes []Check `json:"axes"`
	MS   []Check `json:"ms"`
}

// OK reports whether no re-derived number differs from the manifest.
func (r *RescoreReport) OK() bool {
	for _, c := range slices.Concat(r.Axes, r.MS) {
		if c.Status == StatusDiffers {
			return false
		}
	}
	return true
}

// Rescore re-derives every axis headline and the mean scores from the
// bundle's items and compares them with the manifest.
//
// Axes scored by exact match or rule (acc_cloze, acc_generate,
// prompt_level_strict_acc) and the judged mt axis
// (mean_judge_score_normalized) are the mean of their item scores; safety's
// refusal_on_unsafe is the share of harmful items refused. Corpus chrF++
// (nlg) is not a mean of sentence scores: it is recomputed exactly from the
// per-item chrF++ statistics the bundle carries (chrf_stats). Axes with any
// other metric are listed as not rescorable. ms_ci95 is re-derived with the
// run's seeded bootstrap when the manifest gives bootstrap_resamples.
func Rescore(m *Manifest, items []Item) *RescoreReport {
	byAxis := map[string][]Item{}
	for _, it := range items {
		byAxis[it.Axis] = append(byAxis[it.Axis], it)
	}
	rep := &RescoreReport{}
	rescored := map[string]*float64{}
	axes := make([]string, 0, len(m.Axes))
	for a := range m.Axes {
		axes = append(axes, a)
	}
	slices.Sort(axes)
	for a := range byAxis {
		if _, ok := m.Axes[a]; !ok {
			rep.Axes = append(rep.Axes, Check{Name: a, Status: StatusDiffers, Detail: fmt.Sprintf("%d items of an axis the manifest does not list", len(byAxis[a]))})
		}
	}
	for _, a := range axes {
		h := m.Axes[a]
		c := Check{Name: a, Method: h.Rescore, Published: h.Score}
		its := byAxis[a]
		var v *float64
		var err error
		if st, ok := scorers.StatisticOf(h.Metric); ok && !strings.HasPrefix(h.Rescore, methodNoneAt) {
			v, err = st.Of(itemScores(its))
		} else {
			c.Status = StatusNotChecked
		}
		switch {
		case c.Status != "":
		case err != nil:
			c.Status, c.Detail = StatusDiffers, err.Error()
		case h.Score == nil && (len(its) == 0 || v == nil):
			c.Status = StatusNoScore
		default:
			c.Rescored = v
			c.Status = compare(h.Score, v)
			if c.Status != StatusDiffers && len(its) != h.N {
				c.Status, c.Detail = StatusDiffers, fmt.Sprintf("%d items in the bundle, the manifest says n = %d", len(its), h.N)
			}
		}
		rescored[a] = c.Rescored
		rep.Axes = append(rep.Axes, c)
	}

	// ms_public: the weighted mean of the public axes' headlines, in the
	// order the run summed them.
	pub := Check{Name: "ms_public", Method: "weighted mean of the ms_axes headlines", Published: m.MSPublic}
	var scores, weights []float64
	for _, a := range m.MSAxes {
		h, ok := m.Axes[a]
		if !ok {
			pub.Detail = "ms_axes names axis " + a + ", which the manifest does not list"
			break
		}
		if rescored[a] == nil {
			pub.Detail = "axis " + a + " was not rescored"
			break
		}
		scores, weights = append(scores, *rescored[a]), append(weights, h.Weight)
	}
	rep.MS = append(rep.MS, finish(pub, stats.WeightedMean(scores, weights)))
	rep.MS = append(rep.MS, msCI(m, rescored, pub.Detail)...)

	pooled := Check{Name: "ms_pooled", Method: "per-item pooled mean of the ms_axes (scorers.Pooled: each record counted as its axis's headline counts it)", Published: m.MSPooled}
	var pool scorers.Pooled
	for _, a := range m.MSAxes {
		if !stats.InMS(m.Axes[a].Weight) {
			continue // weight 0: outside every mean
		}
		add := pool.Axis(m.Axes[a].Metric)
		for _, it := range itemScores(byAxis[a]) {
			if err := add(it); err != nil && pooled.Detail == "" {
				pooled.Detail = fmt.Sprintf("axis %s: %v", a, err)
			}
		}
	}
	pooledMean := pool.Value()
	rep.MS = append(rep.MS, finish(pooled, pooledMean))

	exp := Check{Name: "ms_experimental", Method: "weighted mean of the selfbuilt axes' headlines", Published: m.MSExperimental}
	scores, weights = nil, nil
	for _, a := range axes {
		if h := m.Axes[a]; scorers.MeanOf(h.Weight, h.Tier) == scorers.InMSExperimental && h.Score != nil {
			if rescored[a] == nil {
				exp.Detail = "axis " + a + " was not rescored"
				break
			}
			scores, weights = append(scores, *rescored[a]), append(weights, h.Weight)
		}
	}
	rep.MS = append(rep.MS, finish(exp, stats.WeightedMean(scores, weights)))
	return rep
}

// msCI re-derives ms_ci95 as the run computed it (stats.MSInterval): a
// seeded percentile bootstrap over the public axes, each resampled axis
// keeping its weight, or the one weighted axis's own interval.
func msCI(m *Manifest, rescored map[string]*float64, problem string) []Check {
	lo := Check{Name: "ms_ci95.low", Method: "percentile bootstrap over the ms_axes (seed, bootstrap_resamples)"}
	hi := Check{Name: "ms_ci95.high", Method: lo.Method}
	if m.MSCI95 != nil {
		lo.Published, hi.Published = &m.MSCI95[0], &m.MSCI95[1]
	}
	switch {
	case problem != "":
		lo.Detail = problem
	case m.BootstrapResamples < 1:
		lo.Detail = "the manifest does not give bootstrap_resamples"
	}
	if lo.Detail != "" {
		hi.Detail = lo.Detail
		lo.Status, hi.Status = StatusNotChecked, StatusNotChecked
		return []Check{lo, hi}
	}
	var scores, weights []float64
	var own []*[2]float64
	for _, a := range m.MSAxes {
		scores = append(scores, *rescored[a])
		weights = append(weights, m.Axes[a].Weight)
		own = append(own, m.Axes[a].CI95)
	}
	if ci := stats.MSInterval(scores, weights, own, m.BootstrapResamples, uint64(m.Seed)); ci != nil {
		lo.Rescored, hi.Rescored = &ci[0], &ci[1]
	}
	for _, c := range []*Check{&lo, &hi} {
		if c.Published == nil && c.Rescored == nil {
			c.Status = StatusNoScore
		} else {
			c.Status = compare(c.Published, c.Rescored)
		}
	}
	return []Check{lo, hi}
}

// finish sets c's rescored value v and its status.
func finish(c Check, v *float64) Check {
	if c.Detail != "" {
		c.Status = StatusNotChecked
		return c
	}
	c.Rescored = v
	if c.Published == nil && c.Rescored == nil {
		c.Status = StatusNoScore
		return c
	}
	c.Status = compare(c.Published, c.Rescored)
	return c
}

func compare(pub, got *float64) string {
	switch {
	case pub == nil || got == nil:
		return StatusDiffers
	case *pub == *got:
		return StatusExact
	case math.Abs(*pub-*got) <= Tolerance:
		return StatusWithin
	}
	return StatusDiffers
}

// itemScores are the bundle's items as the axis statistics read them: the
// item records of scores.jsonl, with corpus chrF++'s statistics in their
// field.
func itemScores(its []Item) []scorers.ItemScore {
	out := make([]scorers.ItemScore, len(its))
	for i, it := range its {
		s := scorers.ItemScore{ItemID: it.ItemID, Source: it.Source, Lang: it.Lang, Score: it.Score,
			Rating: it.Rating, Label: it.Label, Flagged: it.Flagged, Fields: it.Fields}
		if it.ChrFStats != nil {
			s.Fields = maps.Clone(s.Fields)
			if s.Fields == nil {
				s.Fields = map[string]any{}
			}
			s.Fields[nlg.StatsField] = chrf.Stats(it.ChrFStats)
		}
		out[i] = s
	}
	return out
}
