package concord

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/stats"
)

// ReadScores reads concord's --scores: a model_id,score CSV file, or a
// directory holding runs, whose result.json files give model_id → ranking
// mean (and a note naming the axes it is over).
func ReadScores(path string) (map[string]inputs.ModelScore, string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	if !st.IsDir() {
		scores, err := inputs.ReadScoresCSVFile(path)
		return scores, "", err
	}
	runs, err := inputs.FindRuns(path)
	if err != nil {
		return nil, "", err
	}
	return RankingScores(runs)
}

// RankingScores maps each run's model_id to its ranking mean over the axes
// that discriminate for every run (spec §4, stats.CommonRanking), and says
// in note which axes those are and which it leaves out.
func RankingScores(runs []inputs.Run) (scores map[string]inputs.ModelScore, note string, err error) {
	scores = map[string]inputs.ModelScore{}
	from := map[string]string{}
	entries := make([]stats.RankingEntry, len(runs))
	for i, r := range runs {
		if prev, dup := from[r.ModelID]; dup {
			return nil, "", fmt.Errorf("model_id %q has two runs: %s and %s; keep one", r.ModelID, prev, r.Path())
		}
		from[r.ModelID] = r.Path()
		var axes []stats.RankingAxis
		for name, a := range r.Axes {
			if a.Score != nil {
				axes = append(axes, stats.RankingAxis{Name: name, Score: *a.Score, Weight: a.Weight, Public: a.Tier != scorers.TierSelfbuilt, Discriminates: a.Discriminates})
			}
		}
		e := stats.RankingEntry{Scores: map[string]float64{}}
		e.Weights, _ = stats.RankingWeights(axes)
		for _, a := range axes {
			e.Scores[a.Name] = a.Score
		}
		entries[i] = e
	}
	means, over, leftOut := stats.CommonRanking(entries)
	for i, r := range runs {
		if means[i] == nil {
			return nil, "", fmt.Errorf("%s: no axis discriminates for every run (%s), so there is no ranking mean; left out: %s", r.Path(), orNone(over), orNone(leftOut))
		}
		scores[r.ModelID] = inputs.ModelScore{Score: *means[i], Line: 1}
	}
	note = "runs ranked by ms_ranking over the axes that discriminate for every run: " + strings.Join(over, ", ")
	if len(leftOut) > 0 {
		note += "; left out (near chance, or not scored, for some run): " + strings.Join(leftOut, ", ")
	}
	return scores, note, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// ReadInstrument reads correlate's --ours (or a native --external): a
// score file, or a directory of runs, where each run's result.json gives
// model_id → ranking mean and its <axis>/scores.jsonl files give the
// scored item ids.
func ReadInstrument(path string) (*inputs.Instrument, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return ReadRunsInstrument(path)
	}
	return inputs.ReadInstrumentFile(path)
}

// ReadRunsInstrument reads the runs at or under dir as one instrument.
func ReadRunsInstrument(dir string) (*inputs.Instrument, error) {
	runs, err := inputs.FindRuns(dir)
	if err != nil {
		return nil, err
	}
	scores, note, err := RankingScores(runs)
	if err != nil {
		return nil, err
	}
	in := &inputs.Instrument{Name: "glossobench (" + note + ")", Path: dir, Scores: scores, Items: map[string]string{}}
	for _, r := range runs {
		for axis := range r.Axes {
			items, err := inputs.RunAxisScores(r.Dir, axis)
			if errors.Is(err, fs.ErrNotExist) {
				continue // an axis that scored nothing
			}
			if err != nil {
				return nil, err
			}
			ids := make([]string, 0, len(items))
			for id := range items {
				ids = append(ids, id)
			}
			in.AddItemIDs(ids)
		}
	}
	return in, nil
}

// SharedItems returns the item hashes both instruments scored, sorted. It
// fails when either file lists no items, since then disjointness cannot be
// certified.
func SharedItems(a, b *inputs.Instrument) ([]string, error) {
	for _, in := range []*inputs.Instrument{a, b} {
		if !in.ListsItems {
			return nil, fmt.Errorf("%s lists no item_hashes or item_ids; cannot certify that the instruments share no item", in.Path)
		}
	}
	var shared []string
	for h := range a.Items {
		if _, ok := b.Items[h]; ok {
			if id := cmp.Or(a.Items[h], b.Items[h]); id != "" {
				h += " (" + id + ")"
			}
			shared = append(shared, h)
		}
	}
	slices.Sort(shared)
	return shared, nil
}

// OverlapFree is nil when a and b share no scored item. Else it is
// SharedItems's error, or an *OverlapError naming the shared items.
func OverlapFree(a, b *inputs.Instrument) error {
	shared, err := SharedItems(a, b)
	if err != nil {
		return err
	}
	if len(shared) > 0 {
		return &OverlapError{Ours: a.Title(), External: b.Title(), Shared: shared}
	}
	return nil
}

// OverlapError is two instruments found to share scored items.
type OverlapError struct {
	Ours, External string   // the instruments' titles
	Shared         []string // as SharedItems gives them
}

func (e *OverlapError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "refused: %s and %s share %d scored item(s):", e.Ours, e.External, len(e.Shared))
	for _, h := range e.Shared {
		b.WriteString("\n  " + h)
	}
	return b.String()
}

// Peer says what to read from a peer's results: the task (lm-eval's task,
// SEA-HELM's dotted path, HELM's table), the metric (lm-eval's
// metric,filter, HELM's column) and, for SEA-HELM's timestamped files, the
// run (its datetime; default each model's newest).
type Peer struct {
	Task, Metric, Run string
}

// externalKind says which peer's results --external names: "lm-eval",
// "seahelm", "helm", or "" for the native formats.
func externalKind(path string, q Peer) string {
	switch {
	case inputs.IsSEAHELMResults(path):
		return "seahelm"
	case inputs.IsHELMGroups(path):
		return "helm"
	case inputs.IsLMEvalResults(path), q.Task != "":
		return "lm-eval"
	}
	return ""
}

func readPeerScores(kind, path string, q Peer) (map[string]inputs.ModelScore, error) {
	if q.Run != "" && kind != "seahelm" {
		return nil, fmt.Errorf("%s: --run picks one of SEA-HELM's timestamped runs; these are %s results", path, kind)
	}
	switch kind {
	case "seahelm":
		return inputs.ReadSEAHELM(path, q.Task, q.Run)
	case "helm":
		return inputs.ReadHELMGroups(path, q.Task, q.Metric)
	}
	return inputs.ReadLMEval(path, q.Task, q.Metric)
}

// ReadExternalInstrument reads correlate's --external: a peer's results
// (lm-evaluation-harness, SEA-HELM or HELM; they list no items), else a
// score file or a directory of runs. task and metric say what to read
// from a peer's results.
func ReadExternalInstrument(path string, q Peer) (*inputs.Instrument, error) {
	kind := externalKind(path, q)
	if kind == "" {
		return ReadInstrument(path)
	}
	scores, err := readPeerScores(kind, path, q)
	if err != nil {
		return nil, err
	}
	name := kind
	for _, part := range []string{q.Task, q.Metric, q.Run} {
		if part != "" {
			name += " " + part
		}
	}
	return &inputs.Instrument{Name: name, Path: path, Scores: scores, Items: map[string]string{}}, nil
}

// ReadExternalScores reads concord's --external: a peer's results, else a
// model_id,score CSV.
func ReadExternalScores(path string, q Peer) (map[string]inputs.ModelScore, error) {
	if kind := externalKind(path, q); kind != "" {
		return readPeerScores(kind, path, q)
	}
	return inputs.ReadScoresCSVFile(path)
}
