package scorers

import (
	"fmt"
	"math"

	"github.com/glossobench/glossobench/stats"
)

// Statistic is an axis's published headline as a function of a set of item
// records (the ItemScore lines of scores.jsonl). Every headline is a
// function of summed per-item terms: a mean has terms (score, 1), a share
// (hit, eligible), corpus chrF++ the n-gram statistics of each segment. So
// a bootstrap resamples records and sums their terms, a paired test swaps
// two systems' records item by item, and a rescore sums them all — each
// computing the published statistic, not a proxy for it.
type Statistic struct {
	// Metric is the AxisResult.Metric this statistic computes.
	Metric string
	// Width is the number of terms per record.
	Width int
	// Terms writes a record's Width terms into t (zeroed by the caller);
	// an error names what the record lacks.
	Terms func(s ItemScore, t []float64) error
	// Value is the headline of records whose terms sum to sum; false when
	// it is undefined (no eligible record).
	Value func(sum []float64) (float64, bool)
	// PerRecord says the headline is sum[0]/sum[1] of per-record terms (a
	// mean or a share), so the records of several axes pool into one mean
	// counted as each axis counts them (Pooled).
	PerRecord bool
}

var statistics = registry[Statistic]{kind: "statistic"}

// RegisterStatistic makes st the statistic of its metric; axis plugins call
// it from init. Registering a metric twice panics.
func RegisterStatistic(st Statistic) { statistics.add(st.Metric, st) }

// StatisticOf returns the registered statistic of a metric.
func StatisticOf(metric string) (Statistic, bool) { return statistics.get(metric) }

// TermsOf returns every record's terms, one row per record, in order.
func (st Statistic) TermsOf(items []ItemScore) ([][]float64, error) {
	flat := make([]float64, len(items)*st.Width)
	rows := make([][]float64, len(items))
	for i, s := range items {
		rows[i] = flat[i*st.Width : (i+1)*st.Width : (i+1)*st.Width]
		if err := st.Terms(s, rows[i]); err != nil {
			return nil, fmt.Errorf("item %s: %w", s.ItemID, err)
		}
	}
	return rows, nil
}

// Of is the headline of items, summed in their order; nil when undefined
// (no items, or none the statistic counts).
func (st Statistic) Of(items []ItemScore) (*float64, error) {
	if len(items) == 0 {
		return nil, nil
	}
	rows, err := st.TermsOf(items)
	if err != nil {
		return nil, err
	}
	sum := make([]float64, st.Width)
	for _, r := range rows {
		for k, x := range r {
			sum[k] += x
		}
	}
	v, ok := st.Value(sum)
	if !ok {
		return nil, nil
	}
	return &v, nil
}

// CI is the 95% percentile bootstrap interval of the statistic over n
// records, record(i) being the i-th: each resample sums the terms of the
// records it draws and takes Value, so the interval is of the published
// statistic itself, and for a mean it equals stats.MeanCI of the scores bit
// for bit (the same draws, summed in the same order).
func (st Statistic) CI(n int, record func(i int) ItemScore, resamples int, seed uint64) (*[2]float64, error) {
	w := st.Width
	flat := make([]float64, n*w)
	for i := range n {
		if err := st.Terms(record(i), flat[i*w:(i+1)*w]); err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", st.Metric, i, err)
		}
	}
	sum := make([]float64, w)
	lo, hi, err := stats.PercentileBootstrap(n, resamples, seed, 0.95, func(idx []int) float64 {
		clear(sum)
		for _, i := range idx {
			for k, x := range flat[i*w : (i+1)*w] {
				sum[k] += x
			}
		}
		v, ok := st.Value(sum)
		if !ok {
			return math.NaN()
		}
		return v
	})
	if err != nil {
		return nil, err
	}
	return &[2]float64{lo, hi}, nil
}

// HeadlineCI is the CI of the statistic registered for metric.
func HeadlineCI(metric string, n int, record func(i int) ItemScore, resamples int, seed uint64) (*[2]float64, error) {
	st, ok := StatisticOf(metric)
	if !ok {
		return nil, fmt.Errorf("no statistic registered for metric %q", metric)
	}
	return st.CI(n, record, resamples, seed)
}

// MeanStatistic is the mean of the item scores, the headline of axes whose
// item score is the item's contribution (exact match, rule, judge score).
func MeanStatistic(metric string) Statistic {
	return Statistic{Metric: metric, Width: 2,
		Terms: func(s ItemScore, t []float64) error {
			if math.IsNaN(s.Score) || math.IsInf(s.Score, 0) {
				return fmt.Errorf("score %v", s.Score)
			}
			t[0], t[1] = s.Score, 1
			return nil
		},
		Value:     Ratio,
		PerRecord: true,
	}
}

// Pooled is ms_pooled, the per-item pooled variant of the MS (spec §3): the
// records of several axes pooled into one mean, each record counted as its
// axis's headline counts it — a mean's records with their scores, a share's
// eligible records with their hits (Safety: the harmful prompts, refused or
// not). A corpus statistic (NLG's chrF++) has no per-record share: its
// records enter with their item scores (sentence chrF++). Aggregate and
// rescore both compute it here.
type Pooled struct{ sum, n float64 }

// Axis returns the function that pools one record of an axis whose
// headline metric is metric (the statistic is looked up once per axis).
func (p *Pooled) Axis(metric string) func(ItemScore) error {
	st, ok := StatisticOf(metric)
	if !ok || !st.PerRecord {
		return func(s ItemScore) error {
			p.sum += s.Score
			p.n++
			return nil
		}
	}
	terms := make([]float64, 2)
	return func(s ItemScore) error {
		clear(terms)
		if err := st.Terms(s, terms); err != nil {
			return fmt.Errorf("item %s: %w", s.ItemID, err)
		}
		p.sum += terms[0]
		p.n += terms[1]
		return nil
	}
}

// Value is the pooled mean, nil when no record counted.
func (p *Pooled) Value() *float64 {
	if p.n == 0 {
		return nil
	}
	v := p.sum / p.n
	return &v
}

// Ratio is sum[0]/sum[1], undefined when sum[1] is 0.
func Ratio(sum []float64) (float64, bool) {
	if sum[1] == 0 {
		return 0, false
	}
	return sum[0] / sum[1], true
}
