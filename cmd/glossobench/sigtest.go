package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/stats"
)

func init() {
	register("sigtest", "is A better than B? per-axis and MS paired bootstrap CI and permutation p on shared items", runSigtest)
}

func runSigtest(args []string) int { return sigtestMain(args, os.Stdout, os.Stderr) }

const itemScoresHelp = `Each input is JSONL, one scored item per line:
  {"axis": "knowledge", "item_id": "global_mmlu/17", "score": 1}
Items are paired on (axis, item_id); items scored by only one system are
counted and left out. MS is the weighted mean of the axis means (weights 1
unless --weights says otherwise).
A run directory (<store>/runs/<run>) is read from its result.json and
<axis>/scores.jsonl; MS is then over the axes of both runs' ms_public, with
the runs' axis weights.`

func sigtestMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sigtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	aPath := fs.String("a", "", "system A's per-item scores: a JSONL `FILE` or a run directory (or the first argument)")
	bPath := fs.String("b", "", "system B's per-item scores: a JSONL `FILE` or a run directory (or the second argument)")
	resamples := fs.Int("resamples", 2000, "bootstrap resamples and permutation rounds")
	seed := fs.Uint64("seed", 1, "random seed")
	level := fs.Float64("level", 0.95, "confidence level of the intervals")
	weights := fs.String("weights", "", "axis weights in MS, e.g. `knowledge=1,nlu=2` (default 1 each)")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	strictParity := fs.Bool("strict-parity", false, "refuse unless A and B are runs with the same model_meta.reasoning_mode (spec §10 #11); exit 3")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench sigtest [flags] A B   (or --a A --b B); A and B are JSONL files or run directories")
		fmt.Fprintln(stderr, "\nPer axis and for MS: A − B on shared items, a paired bootstrap percentile interval")
		fmt.Fprintln(stderr, "(items resampled within each axis) and a paired sign-flip permutation p-value.")
		fmt.Fprintln(stderr, "Exit 0 with a report, 1 on error, 3 when --strict-parity refuses.")
		fmt.Fprintln(stderr, "\n"+itemScoresHelp)
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return 1
	}
	if *aPath == "" && len(rest) > 0 {
		*aPath, rest = rest[0], rest[1:]
	}
	if *bPath == "" && len(rest) > 0 {
		*bPath, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "glossobench sigtest: unexpected argument %q\n", rest[0])
		return 1
	}
	if *aPath == "" || *bPath == "" {
		fmt.Fprintln(stderr, "glossobench sigtest: two score files are required")
		return 1
	}
	w, err := parseWeights(*weights)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench sigtest: --weights: %v\n", err)
		return 1
	}
	a, err := readSigtestInput(*aPath)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench sigtest: %v\n", err)
		return 1
	}
	b, err := readSigtestInput(*bPath)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench sigtest: %v\n", err)
		return 1
	}
	if *strictParity {
		if err := reasoningParity(*aPath, a, *bPath, b); err != nil {
			fmt.Fprintf(stderr, "glossobench sigtest: --strict-parity: %v\n", err)
			return 3
		}
	}
	rep, err := sigtest(a, b, w, *resamples, *seed, *level)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench sigtest: %v\n", err)
		return 1
	}
	rep.A, rep.B = *aPath, *bPath
	rep.print(stdout)
	if *out != "" {
		if err := writeReportJSON(*out, rep); err != nil {
			fmt.Fprintf(stderr, "glossobench sigtest: %v\n", err)
			return 1
		}
	}
	return 0
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func parseWeights(s string) (map[string]float64, error) {
	w := map[string]float64{}
	if s == "" {
		return w, nil
	}
	for _, part := range strings.Split(s, ",") {
		axis, val, ok := strings.Cut(part, "=")
		axis = strings.TrimSpace(axis)
		if !ok || axis == "" {
			return nil, fmt.Errorf("%q: want axis=weight", part)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q: weight must be a positive number", part)
		}
		w[axis] = v
	}
	return w, nil
}

// sigtestInput is one system's item records per axis and the statistic
// each axis publishes, with the axis weights and MS axes when they come
// from a run.
type sigtestInput struct {
	run     *runResult                              // nil for JSONL input
	records map[string]map[string]scorers.ItemScore // axis → item id → record
	stat    map[string]scorers.Statistic            // axis → its headline statistic
	weights map[string]float64                      // from result.json; nil for JSONL input
	msAxes  []string                                // the run's ms_public axes; nil for JSONL input
}

// meanItemScore is the statistic of JSONL input, which carries scores only.
var meanItemScore = scorers.MeanStatistic("mean item score")

// readSigtestInput reads a JSONL file, or a run directory holding
// result.json and <axis>/scores.jsonl: then every axis is compared on the
// statistic it publishes (scorers.StatisticOf its metric).
func readSigtestInput(path string) (sigtestInput, error) {
	st, err := os.Stat(path)
	if err != nil {
		return sigtestInput{}, err
	}
	in := sigtestInput{records: map[string]map[string]scorers.ItemScore{}, stat: map[string]scorers.Statistic{}}
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
	r, err := readRunResult(path)
	if err != nil {
		return sigtestInput{}, err
	}
	in.run, in.weights, in.msAxes = &r, map[string]float64{}, r.Summary.MSAxes
	if in.msAxes == nil {
		in.msAxes = []string{}
	}
	f, err := runfiles.Dir(path)
	if err != nil {
		return sigtestInput{}, err
	}
	defer f.Close()
	for axis, ax := range r.Axes {
		if ax.Score == nil {
			continue // an axis that published no headline
		}
		stat, ok := scorers.StatisticOf(ax.Metric)
		if !ok {
			return sigtestInput{}, fmt.Errorf("%s: axes.%s.metric %q has no known statistic", r.path(), axis, ax.Metric)
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
			return sigtestInput{}, err
		}
		if len(recs) > 0 {
			in.records[axis], in.stat[axis], in.weights[axis] = recs, stat, ax.Weight
		}
	}
	if len(in.records) == 0 {
		return sigtestInput{}, fmt.Errorf("%s: the run has no per-item scores", path)
	}
	return in, nil
}

// sigtestReport is what sigtest prints and writes.
type sigtestReport struct {
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

// reasoningParity refuses a comparison of runs whose reasoning modes
// differ: thinking-on against thinking-off is a confound (spec §10 #11).
func reasoningParity(aPath string, a sigtestInput, bPath string, b sigtestInput) error {
	for _, x := range []struct {
		path string
		in   sigtestInput
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

// sigtest compares A and B per shared axis and on MS. Weights given on the
// command line win over those of the runs. When both inputs are runs, MS is
// over the axes both counted in ms_public; otherwise over every shared axis.
func sigtest(ia, ib sigtestInput, weights map[string]float64, resamples int, seed uint64, level float64) (*sigtestReport, error) {
	a, b := ia.records, ib.records
	rep := &sigtestReport{Resamples: resamples, Seed: seed, Level: level, OnlyA: map[string]int{}, OnlyB: map[string]int{}, Statistic: map[string]string{}}
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
			wa, oka := ia.weights[ax]
			wb, okb := ib.weights[ax]
			if oka && okb && wa != wb {
				rep.Notes = append(rep.Notes, fmt.Sprintf("axis %s: the runs weigh it %g and %g; using A's", ax, wa, wb))
			}
			w = cmp.Or(wa, wb)
		}
		pa := stats.PairedTerms{Name: ax, Weight: w, Value: st.Value}
		var ra, rb []scorers.ItemScore
		for _, id := range ids {
			ra, rb = append(ra, a[ax][id]), append(rb, b[ax][id])
		}
		var err error
		if pa.A, err = st.TermsOf(ra); err != nil {
			return nil, fmt.Errorf("A: axis %s: %w", ax, err)
		}
		if pa.B, err = st.TermsOf(rb); err != nil {
			return nil, fmt.Errorf("B: axis %s: %w", ax, err)
		}
		rep.Statistic[ax] = st.Metric
		paired = append(paired, pa)
	}
	if len(paired) == 0 {
		return nil, errors.New("the two inputs share no scored item")
	}
	// Split off the axes MS leaves out (self-built tiers of a run).
	msPaired, rest := paired, []stats.PairedTerms(nil)
	if ia.msAxes != nil && ib.msAxes != nil {
		msPaired = nil
		for _, pa := range paired {
			if slices.Contains(ia.msAxes, pa.Name) && slices.Contains(ib.msAxes, pa.Name) {
				msPaired = append(msPaired, pa)
			} else {
				rest = append(rest, pa)
			}
		}
		if len(msPaired) == 0 {
			return nil, errors.New("the runs share no axis of their ms_public")
		}
		if len(rest) > 0 {
			var names []string
			for _, pa := range rest {
				names = append(names, pa.Name)
			}
			rep.Notes = append(rep.Notes, "MS leaves out "+strings.Join(names, ", ")+" (not in both runs' ms_public)")
		}
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

func reasoningMode(r *runResult) string {
	if r.ModelMeta == nil {
		return ""
	}
	return r.ModelMeta.ReasoningMode
}

func (rep *sigtestReport) print(w io.Writer) {
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
