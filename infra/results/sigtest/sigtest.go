// Package sigtest answers "is A better than B?" for two runs or two files
// of per-item scores: per shared axis and for MS, A − B on the shared
// items with a paired bootstrap percentile interval and a paired
// sign-flip permutation p (stats.CompareStatistics). A run's axis is
// compared on the statistic it publishes (scorers.StatisticOf), so A and
// B are its result.json headlines.
package sigtest

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/stats"
)

// Options are a comparison's settings: Weights given here win over those
// of the runs; StrictParity refuses runs whose reasoning modes differ.
type Options struct {
	Weights      map[string]float64
	Resamples    int
	Seed         uint64
	Level        float64
	StrictParity bool
}

// ParityError is Run's refusal under Options.StrictParity.
type ParityError struct{ Err error }

func (e *ParityError) Error() string { return e.Err.Error() }
func (e *ParityError) Unwrap() error { return e.Err }

// Run reads A and B (each a JSONL file of item scores or a run directory),
// checks their reasoning parity when asked, and compares them.
func Run(aPath, bPath string, opt Options) (*Report, error) {
	a, err := ReadInput(aPath)
	if err != nil {
		return nil, err
	}
	b, err := ReadInput(bPath)
	if err != nil {
		return nil, err
	}
	if opt.StrictParity {
		if err := ReasoningParity(aPath, a, bPath, b); err != nil {
			return nil, &ParityError{err}
		}
	}
	rep, err := Compare(a, b, opt.Weights, opt.Resamples, opt.Seed, opt.Level)
	if err != nil {
		return nil, err
	}
	rep.A, rep.B = aPath, bPath
	return rep, nil
}

// Input is one system's item records per axis and the statistic
// each axis publishes, with the axis weights and MS axes when they come
// from a run.
type Input struct {
	run     *inputs.Run                             // nil for JSONL input
	records map[string]map[string]scorers.ItemScore // axis → item id → record
	stat    map[string]scorers.Statistic            // axis → its headline statistic
	weights map[string]float64                      // from result.json; nil for JSONL input
	msAxes  []string                                // the run's ms_public axes; nil for JSONL input
}

// meanItemScore is the statistic of JSONL input, which carries scores only.
var meanItemScore = scorers.MeanStatistic("mean item score")

// ReadInput reads a JSONL file, or a run directory holding
// result.json and <axis>/scores.jsonl: then every axis is compared on the
// statistic it publishes (scorers.StatisticOf its metric).
func ReadInput(path string) (Input, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Input{}, err
	}
	in := Input{records: map[string]map[string]scorers.ItemScore{}, stat: map[string]scorers.Statistic{}}
	if !st.IsDir() {
		sc, err := inputs.ReadItemScoresFile(path)
		for axis, items := range sc {
			in.records[axis] = map[string]scorers.ItemScore{}
			in.stat[axis] = meanItemScore
			for id, v := range items {
				in.records[axis][id] = scorers.ItemScore{ItemID: id, Score: v}
			}
		}
		return in, err
	}
	f, err := runfiles.Dir(path)
	if err != nil {
		return Input{}, err
	}
	defer f.Close()
	return FolderInput(f)
}

// FolderInput reads a run folder, on disk or in a store: every axis with a
// headline is compared on the statistic it publishes (scorers.StatisticOf
// its metric), over its scores.jsonl records.
func FolderInput(f *runfiles.Folder) (Input, error) {
	res, err := f.Result()
	if err != nil {
		return Input{}, err
	}
	r := inputs.Run{Dir: f.Where(), Result: res}
	if r.ModelID == "" {
		return Input{}, fmt.Errorf("%s: field model_id is missing or empty", r.Path())
	}
	in := Input{records: map[string]map[string]scorers.ItemScore{}, stat: map[string]scorers.Statistic{}}
	in.run, in.weights, in.msAxes = &r, map[string]float64{}, r.Summary.MSAxes
	if in.msAxes == nil {
		in.msAxes = []string{}
	}
	for axis, ax := range r.Axes {
		if ax.Score == nil {
			continue // an axis that published no headline
		}
		stat, ok := scorers.StatisticOf(ax.Metric)
		if !ok {
			return Input{}, fmt.Errorf("%s: axes.%s.metric %q has no known statistic", r.Path(), axis, ax.Metric)
		}
		recs := map[string]scorers.ItemScore{}
		err := f.EachScore(axis, func(s scorers.ItemScore) error {
			recs[s.ItemID] = s
			return nil
		})
		if errors.Is(err, fs.ErrNotExist) {
			continue // an axis that scored nothing
		}
		if err != nil {
			return Input{}, err
		}
		if len(recs) > 0 {
			in.records[axis], in.stat[axis], in.weights[axis] = recs, stat, ax.Weight
		}
	}
	if len(in.records) == 0 {
		return Input{}, fmt.Errorf("%s: the run has no per-item scores", f.Where())
	}
	return in, nil
}

// Report is what sigtest prints and writes.
type Report struct {
	A, B      string             `json:"-"`
	Resamples int                `json:"resamples"`
	Seed      uint64             `json:"seed"`
	Level     float64            `json:"level"`
	Axes      []stats.Difference `json:"axes"`
	MS        stats.Difference   `json:"ms"`
	OnlyA     map[string]int     `json:"only_a"` // per axis: items only A scored
	OnlyB     map[string]int     `json:"only_b"`
	// Statistic names, per axis, what A and B are: the axis's published
	// headline metric for runs, the mean item score for JSONL input.
	Statistic map[string]string `json:"statistic"`
	Notes     []string          `json:"notes,omitempty"`
}

// ReasoningParity refuses a comparison of runs whose reasoning modes
// differ: thinking-on against thinking-off is a confound (spec §10 #11).
func ReasoningParity(aPath string, a Input, bPath string, b Input) error {
	for _, x := range []struct {
		path string
		in   Input
	}{{aPath, a}, {bPath, b}} {
		if x.in.run == nil {
			return fmt.Errorf("%s is not a run directory, so its reasoning mode is unknown", x.path)
		}
	}
	ma, mb := reasoningMode(a.run), reasoningMode(b.run)
	if ma != mb {
		show := func(m string) string { return cmp.Or(m, "unrecorded") }
		return fmt.Errorf("refused: reasoning modes differ: %s (%s) is %q, %s (%s) is %q",
			aPath, a.run.ModelID, show(ma), bPath, b.run.ModelID, show(mb))
	}
	return nil
}

// Compare compares A and B per shared axis and on MS. Weights given on the
// command line win over those of the runs. When both inputs are runs, MS is
// over the axes both counted in ms_public; otherwise over every shared axis.
func Compare(ia, ib Input, weights map[string]float64, resamples int, seed uint64, level float64) (*Report, error) {
	a, b := ia.records, ib.records
	rep := &Report{Resamples: resamples, Seed: seed, Level: level, OnlyA: map[string]int{}, OnlyB: map[string]int{}, Statistic: map[string]string{}}
	var axes []string
	for ax := range a {
		if _, ok := b[ax]; ok {
			axes = append(axes, ax)
		} else {
			rep.Notes = append(rep.Notes, fmt.Sprintf("axis %s only in A", ax))
		}
	}
	for ax := range b {
		if _, ok := a[ax]; !ok {
			rep.Notes = append(rep.Notes, fmt.Sprintf("axis %s only in B", ax))
		}
	}
	slices.Sort(axes)
	slices.Sort(rep.Notes)
	for ax := range weights {
		if !slices.Contains(axes, ax) {
			return nil, fmt.Errorf("--weights names axis %q, which the two files do not share", ax)
		}
	}
	var paired []stats.PairedTerms
	for _, ax := range axes {
		st := ia.stat[ax]
		if st.Metric != ib.stat[ax].Metric {
			return nil, fmt.Errorf("axis %s: A publishes %s and B %s; they cannot be compared", ax, st.Metric, ib.stat[ax].Metric)
		}
		var ids []string
		for id := range a[ax] {
			if _, ok := b[ax][id]; ok {
				ids = append(ids, id)
			} else {
				rep.OnlyA[ax]++
			}
		}
		for id := range b[ax] {
			if _, ok := a[ax][id]; !ok {
				rep.OnlyB[ax]++
			}
		}
		if len(ids) == 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("axis %s: no shared items, left out", ax))
			continue
		}
		slices.Sort(ids) // a fixed order makes the seeded resampling reproducible
		w, ok := weights[ax]
		if !ok {
			// A run's weight is its own, 0 included (outside MS);
			// JSONL input carries none and weighs 1.
			wa, oka := ia.weights[ax]
			wb, okb := ib.weights[ax]
			switch {
			case oka && okb && wa != wb:
				rep.Notes = append(rep.Notes, fmt.Sprintf("axis %s: the runs weigh it %g and %g; using A's", ax, wa, wb))
				w = wa
			case oka:
				w = wa
			case okb:
				w = wb
			default:
				w = 1
			}
		}
		pa := stats.PairedTerms{Name: ax, Weight: w, Value: st.Value}
		var ra, rb []scorers.ItemScore
		for _, id := range ids {
			ra, rb = append(ra, a[ax][id]), append(rb, b[ax][id])
		}
		var err error
		if pa.A, err = st.TermsOf(ra); err != nil {
			return nil, fmt.Errorf("system A: axis %s: %w", ax, err)
		}
		if pa.B, err = st.TermsOf(rb); err != nil {
			return nil, fmt.Errorf("system B: axis %s: %w", ax, err)
		}
		rep.Statistic[ax] = st.Metric
		paired = append(paired, pa)
	}
	if len(paired) == 0 {
		return nil, errors.New("the two inputs share no scored item")
	}
	// Split off the axes MS leaves out: self-built tiers of a run, and
	// axes of weight 0 (stats.InMS).
	var msPaired, rest []stats.PairedTerms
	var why []string
	for _, pa := range paired {
		switch {
		case ia.msAxes != nil && ib.msAxes != nil && !(slices.Contains(ia.msAxes, pa.Name) && slices.Contains(ib.msAxes, pa.Name)):
			why = append(why, pa.Name+" (not in both runs' ms_public)")
		case !stats.InMS(pa.Weight):
			why = append(why, pa.Name+" (weight 0)")
		default:
			msPaired = append(msPaired, pa)
			continue
		}
		pa.Weight = 1 // compared on its own; the MS of this group is not used
		rest = append(rest, pa)
	}
	if len(msPaired) == 0 {
		return nil, errors.New("the inputs share no axis of positive weight in their ms_public")
	}
	if len(rest) > 0 {
		rep.Notes = append(rep.Notes, "MS leaves out "+strings.Join(why, ", "))
	}
	var err error
	rep.Axes, rep.MS, err = stats.CompareStatistics(msPaired, resamples, seed, level)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		more, _, err := stats.CompareStatistics(rest, resamples, seed, level)
		if err != nil {
			return nil, err
		}
		rep.Axes = append(rep.Axes, more...)
		slices.SortFunc(rep.Axes, func(x, y stats.Difference) int { return strings.Compare(x.Name, y.Name) })
	}
	return rep, nil
}

func reasoningMode(r *inputs.Run) string {
	if r.ModelMeta == nil {
		return ""
	}
	return r.ModelMeta.ReasoningMode
}

func (rep *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "A = %s\nB = %s\n", rep.A, rep.B)
	width := len("axis")
	for _, d := range rep.Axes {
		width = max(width, len(d.Name))
	}
	ci := fmt.Sprintf("%g%% CI", 100*rep.Level)
	fmt.Fprintf(w, "%-*s  %6s  %8s  %8s  %9s  %-21s  %8s\n", width, "axis", "n", "A", "B", "A-B", ci, "p")
	row := func(d stats.Difference) {
		fmt.Fprintf(w, "%-*s  %6d  %8.4f  %8.4f  %+9.4f  [%+8.4f, %+8.4f]  %8.4g\n", width, d.Name, d.N, d.A, d.B, d.Delta, d.Lo, d.Hi, d.P)
	}
	for _, d := range rep.Axes {
		row(d)
	}
	row(rep.MS)
	for _, d := range rep.Axes {
		fmt.Fprintf(w, "axis %s: A and B are %s on the shared items\n", d.Name, rep.Statistic[d.Name])
	}
	fmt.Fprintln(w, "MS: the weighted mean of those axis statistics")
	for _, ax := range sortedAxisKeys(rep.OnlyA) {
		fmt.Fprintf(w, "axis %s: %d item(s) only A scored, left out\n", ax, rep.OnlyA[ax])
	}
	for _, ax := range sortedAxisKeys(rep.OnlyB) {
		fmt.Fprintf(w, "axis %s: %d item(s) only B scored, left out\n", ax, rep.OnlyB[ax])
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "(%d bootstrap resamples and %d sign-flip permutations, seed %d; p = (count+1)/(rounds+1))\n", rep.Resamples, rep.Resamples, rep.Seed)
}

func sortedAxisKeys(m map[string]int) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}
