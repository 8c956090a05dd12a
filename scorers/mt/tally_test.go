package mt

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/judge"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// tallyFixture is the 80 MT-Bench questions with predictions covering what
// Score counts: truncated answers, unanswered items, items no judge rated,
// a single rated turn, parse failures, dropped judges, fractional ratings,
// judges that disagree (low_conf), a judge who only appears late, and harm
// ratings that an MT score must ignore.
func tallyFixture(t *testing.T) ([]scorers.Item, []scorers.Prediction) {
	t.Helper()
	items := loadAll(t)
	rng := rand.New(rand.NewPCG(7, 11))
	preds := make([]scorers.Prediction, len(items))
	var ratings []judge.Rating
	for i, it := range items {
		p := scorers.Prediction{ItemID: it.ID}
		if i%13 != 5 { // every 13th item from the 6th has no answer at all
			for range it.Turns {
				finish := "stop"
				if rng.IntN(4) == 0 {
					finish = "length"
				}
				p.Generations = append(p.Generations, backends.Generation{Text: "answer", FinishReason: finish})
			}
		}
		preds[i] = p
		if i%9 == 4 {
			continue // answered or not, no judge rated it
		}
		judges := []string{"alpha", "beta"}
		if i >= 40 {
			judges = append(judges, "gamma") // a judge joining halfway through the axis
		}
		for turn := 1; turn <= len(it.Turns); turn++ {
			if i%11 == 3 && turn == 2 {
				continue // only the first turn was rated
			}
			for _, j := range judges {
				r := judge.Rating{Judge: j, ItemID: it.ID, Turn: turn, Kind: judge.KindRating,
					Note: "a note the tally must not keep", Raw: `{"explanation": "long reply", "rating": 7}`}
				switch x := rng.IntN(20); {
				case x == 0:
					r.ParseFail = true
				case x == 1:
					r.Dropped = true
					r.Note = "timeout"
				default:
					v := float64(rng.IntN(21)) / 2 // 0, 0.5, ..., 10: rounding matters for κ
					if i%7 == 2 && j == "beta" {
						v = 10 - v // strong disagreement: low_conf
					}
					r.Value = &v
				}
				ratings = append(ratings, r)
			}
		}
		if i%5 == 1 {
			v := 1.0
			ratings = append(ratings, judge.Rating{Judge: "guard", ItemID: it.ID, Kind: judge.KindHarm, Value: &v, Label: judge.LabelHarmful})
		}
	}
	if err := judge.Attach(preds, ratings); err != nil {
		t.Fatal(err)
	}
	return items, preds
}

// The fixture must exercise every counter and note, or a tally that loses
// one across shards would still match the whole.
func TestTallyFixtureCoversScore(t *testing.T) {
	items, preds := tallyFixture(t)
	r, err := New().Score(items, preds, scorers.ScoreOptions{Seed: 5, BootstrapResamples: 300})
	if err != nil {
		t.Fatal(err)
	}
	sec := r.Secondary
	notes := strings.Join(r.Notes, "\n")
	switch {
	case r.Score == nil || r.CI95 == nil || r.N == 0 || r.N == len(items):
		t.Errorf("score %v CI %v n %d of %d", r.Score, r.CI95, r.N, len(items))
	case r.TruncationRate == 0:
		t.Error("no truncated answer")
	case sec["parse_fail"].(int) == 0 || sec["judge_dropped"].(int) == 0:
		t.Errorf("parse_fail %v dropped %v", sec["parse_fail"], sec["judge_dropped"])
	case len(sec["low_conf_items"].([]string)) == 0 || !strings.Contains(notes, "flagged low_conf"):
		t.Errorf("no low_conf item: %v", notes)
	case !strings.Contains(notes, "items had no valid judge rating"):
		t.Errorf("no unrated item: %v", notes)
	case len(sec["judges"].([]string)) != 3 || len(sec["by_category"].(map[string]Group)) != 8 || len(sec["by_turn"].(map[string]Group)) != 2:
		t.Errorf("judges %v by_category %v by_turn %v", sec["judges"], sec["by_category"], sec["by_turn"])
	case sec["inter_judge_kappa"].(*float64) == nil || len(sec["inter_judge_kappa_pairs"].([]judge.PairKappa)) != 3:
		t.Errorf("κ %v pairs %v", sec["inter_judge_kappa"], sec["inter_judge_kappa_pairs"])
	}
}

// Adding the shards of the axis in order gives exactly what scoring it whole
// gives, however it is split.
func TestTallyShardSplits(t *testing.T) {
	items, preds := tallyFixture(t)
	scorerstest.CheckSplits(t, New(), scorers.ScoreOptions{Seed: 5, BootstrapResamples: 300}, items, preds)
}

// Result on a tally given nothing is Score of nothing.
func TestTallyEmpty(t *testing.T) {
	if got := scorerstest.CheckEmpty(t, New(), scorers.ScoreOptions{Seed: 1}); got.Metric != "skipped_no_judge" {
		t.Errorf("metric %q, want skipped_no_judge", got.Metric)
	}
}

// A bad shard is an error and counts for nothing: the tally goes on as if it
// had never been added.
func TestTallyAddErrors(t *testing.T) {
	items, preds := tallyFixture(t)
	opt := scorers.ScoreOptions{Seed: 2, BootstrapResamples: 100}
	want, err := New().Score(items[:20], preds[:20], opt)
	if err != nil {
		t.Fatal(err)
	}
	tl := scorerstest.Tally(t, New(), opt)
	scores := scorerstest.Add(t, tl, items[:10], preds[:10], []int{10})
	if _, err := tl.Add(items[10:20], preds[10:19]); err == nil || !strings.Contains(err.Error(), "10 items but 9 predictions") {
		t.Errorf("short predictions: %v", err)
	}
	swapped := append([]scorers.Prediction(nil), preds[10:20]...)
	swapped[3], swapped[4] = swapped[4], swapped[3]
	if _, err := tl.Add(items[10:20], swapped); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("prediction 13 is for %q, want %q", items[14].ID, items[13].ID)) {
		t.Errorf("mismatched item id: %v", err)
	}
	broken := append([]scorers.Prediction(nil), preds[10:20]...)
	broken[9].Variants = map[string]json.RawMessage{judge.VariantKey: json.RawMessage(`{"not": "a list"}`)}
	if _, err := tl.Add(items[10:20], broken); err == nil || !strings.Contains(err.Error(), "variants.judge") {
		t.Errorf("undecodable ratings: %v", err)
	}
	scores = append(scores, scorerstest.Add(t, tl, items[10:20], preds[10:20], []int{10})...)
	scorerstest.CheckResult(t, "after rejected shards", tl, scores, want)
}

func TestTallyBadFloor(t *testing.T) {
	opt := scorers.ScoreOptions{Options: map[string]any{OptFloor: "high"}}
	if _, err := New().Tally(opt); err == nil || !strings.Contains(err.Error(), "axes.mt.options.agreement_floor") {
		t.Errorf("Tally: %v", err)
	}
	r, err := New().Score(nil, nil, opt)
	if err == nil || !strings.Contains(err.Error(), "axes.mt.options.agreement_floor") || r.Axis != "mt" || r.Version != Version {
		t.Errorf("Score: %+v %v", r, err)
	}
}

// The tally keeps no ratings for κ, only per-pair agreement counts, and
// gives the κ of the ratings as the predictions hold them.
func TestTallyKappaIsKappaOfTheRatings(t *testing.T) {
	items, preds := tallyFixture(t)
	tl := scorerstest.Tally(t, New(), scorers.ScoreOptions{})
	scorerstest.Add(t, tl, items, preds, []int{len(items)})
	var full [][]judge.Rating
	for _, p := range preds {
		rs, err := judge.FromPrediction(p)
		if err != nil {
			t.Fatal(err)
		}
		_, groups := judge.ByTurn(rs, judge.KindRating)
		full = append(full, groups...)
	}
	want := scorerstest.JSON(t, judge.Kappa(full).Pairs)
	got := scorerstest.JSON(t, scorerstest.Result(t, tl).Secondary["inter_judge_kappa_pairs"])
	if got != want {
		t.Errorf("κ pairs %s, want %s", got, want)
	}
}
