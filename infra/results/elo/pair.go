package elo

import (
	"context"
	"errors"
	"io/fs"

	"fmt"
	"slices"
	"strconv"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/mt"

	"github.com/glossobench/glossobench/scorers/judge"
	"github.com/glossobench/glossobench/stats"
)

// Turns maps "<item id>#<turn>" to a run's judge request for that turn of
// an MT conversation (scorers/mt's JudgeRequests): the questions, the run's
// answers so far and the references.
type Turns map[string]judge.Request

// TurnKey keys a request in Turns.
func TurnKey(r judge.Request) string { return r.ItemID + "#" + strconv.Itoa(r.Turn) }

// MTTurns reads a run's MT conversations as the judge requests of each turn,
// for PairMatches. A run without an MT axis has none.
func MTTurns(run *runfiles.Folder) (Turns, error) {
	items, err := run.Items("mt")
	if errors.Is(err, fs.ErrNotExist) {
		return Turns{}, nil
	}
	if err != nil {
		return nil, err
	}
	preds, err := run.Predictions("mt")
	if err != nil {
		return nil, err
	}
	var answered []scorers.Item
	var ps []scorers.Prediction
	for _, it := range items {
		if p, ok := preds[it.ID]; ok && p.Error == "" {
			answered = append(answered, it)
			ps = append(ps, p)
		}
	}
	turns := Turns{}
	for _, r := range mt.New().JudgeRequests(answered, ps) {
		turns[TurnKey(r)] = r
	}
	return turns, nil
}

// PairMatches lets the judges compare every two runs on every MT turn both
// answered (spec §4: judge pairwise matches on MT). Each judge sees the pair
// in both orders and judge.PairScore keeps only a verdict that survives the
// swap; a turn's match score is the mean over the judges that gave one. A
// turn no judge could decide is no match, and is counted in the notes.
// turns[i] belongs to runs[i].
func PairMatches(ctx context.Context, judges []*judge.Judge, runs []*Run, turns []Turns) ([]stats.Match, []string, error) {
	if len(turns) != len(runs) {
		return nil, nil, fmt.Errorf("elo: %d runs but %d turn sets", len(runs), len(turns))
	}
	type pairTurn struct {
		a, b   int
		ab, ba judge.Request
	}
	var todo []pairTurn
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			for _, key := range sharedIDs(turns[i], turns[j]) {
				ra, rb := turns[i][key], turns[j][key]
				ab := judge.Request{ItemID: ra.ItemID, Lang: ra.Lang, Turn: ra.Turn, Kind: judge.KindPair,
					Question: ra.Question, Answer: ra.Answer, AnswerB: rb.Answer, Reference: ra.Reference, References: ra.References}
				ba := ab
				ba.Answer, ba.AnswerB = rb.Answer, ra.Answer
				todo = append(todo, pairTurn{i, j, ab, ba})
			}
		}
	}
	if len(todo) == 0 {
		return nil, []string{"mt: the runs share no answered turn; no pairwise judge matches"}, nil
	}
	sums, counts := make([]float64, len(todo)), make([]int, len(todo))
	var notes []string
	for _, j := range judges {
		// Self-judge exclusion (spec §10 #2), pair by pair: a judge never
		// decides a match its own family plays in.
		var idx []int
		var reqs []judge.Request
		for k, pt := range todo {
			if ownFamily(j, runs[pt.a]) || ownFamily(j, runs[pt.b]) {
				continue
			}
			idx = append(idx, k)
			reqs = append(reqs, pt.ab, pt.ba)
		}
		if skipped := len(todo) - len(idx); skipped > 0 {
			notes = append(notes, fmt.Sprintf("judge %s: excluded from %d pairwise turns played by its own family", j.Config().Name, skipped))
		}
		if len(reqs) == 0 {
			continue
		}
		rs, err := j.Rate(ctx, reqs)
		if err != nil {
			return nil, nil, fmt.Errorf("judge %s: %w", j.Config().Name, err)
		}
		failed := 0
		for n, k := range idx {
			s, ok := judge.PairScore(rs[2*n], rs[2*n+1])
			if !ok {
				failed++
				continue
			}
			sums[k] += s
			counts[k]++
		}
		if failed > 0 {
			notes = append(notes, fmt.Sprintf("judge %s: no verdict on %d of %d pairwise turns (parse_fail or dropped)", j.Config().Name, failed, len(idx)))
		}
	}
	var out []stats.Match
	undecided := 0
	for k, pt := range todo {
		if counts[k] == 0 {
			undecided++
			continue
		}
		out = append(out, stats.Match{A: runs[pt.a].Player, B: runs[pt.b].Player, Score: sums[k] / float64(counts[k])})
	}
	if undecided > 0 {
		notes = append(notes, fmt.Sprintf("mt: %d of %d pairwise turns had no judge verdict and are not matches", undecided, len(todo)))
	}
	slices.Sort(notes)
	return out, notes, nil
}

func ownFamily(j *judge.Judge, r *Run) bool {
	kept, _ := judge.SelfExclude([]judge.Config{j.Config()}, r.Family)
	return len(kept) == 0
}
