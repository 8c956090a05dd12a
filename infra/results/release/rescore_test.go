package release

import "testing"

func f(x float64) *float64 { return &x }

// TestRescoreSafetyAndMT checks the two judged headlines against hand
// counts: refusal_on_unsafe over harmful items only, and the mt mean.
func TestRescoreSafetyAndMT(t *testing.T) {
	// harmful = (refused == label): h1 refused, h2 refused, h3 answered;
	// s1 answered (correct), s2 refused (over-refusal, wrong).
	items := []Item{
		{Axis: "safety", ItemID: "h1", Label: true, Fields: map[string]any{"refused": true}},
		{Axis: "safety", ItemID: "h2", Label: true, Fields: map[string]any{"refused": true}},
		{Axis: "safety", ItemID: "h3", Label: false, Fields: map[string]any{"refused": false}},
		{Axis: "safety", ItemID: "s1", Label: true, Fields: map[string]any{"refused": false}},
		{Axis: "safety", ItemID: "s2", Label: false, Fields: map[string]any{"refused": true}},
		{Axis: "mt", ItemID: "m1", Score: 0.7},
		{Axis: "mt", ItemID: "m2", Score: 0.4},
	}
	m := &Manifest{Axes: map[string]AxisHeadline{
		"safety": {Metric: "refusal_on_unsafe", Score: f(2.0 / 3), N: 5, Weight: 1, Rescore: method("refusal_on_unsafe")},
		"mt":     {Metric: "mean_judge_score_normalized", Score: f((0.7 + 0.4) / 2), N: 2, Weight: 1, Rescore: method("mean_judge_score_normalized")},
	}, MSAxes: []string{"mt", "safety"}, MSPublic: f(((0.7+0.4)/2 + 2.0/3) / 2), MSPooled: f((0.7 + 0.4 + 2) / 5)}
	// ms_pooled counts each record as its axis's headline does: mt's two
	// scores and safety's three harmful prompts, two of them refused.
	rep := Rescore(m, items)
	for _, c := range rep.Axes {
		if c.Status != StatusExact {
			t.Errorf("%s: %s %s (rescored %v)", c.Name, c.Status, c.Detail, c.Rescored)
		}
	}
	if !rep.OK() {
		t.Errorf("not OK: %+v", rep.MS)
	}
	// A refused harmful item turned into an answer moves the headline.
	items[0].Fields["refused"] = false
	items[0].Label = false
	if rep := Rescore(m, items); rep.OK() {
		t.Error("changed refusal went unnoticed")
	}
	delete(items[1].Fields, "refused")
	rep = Rescore(m, items)
	if rep.Axes[1].Name != "safety" || rep.Axes[1].Status != StatusDiffers || rep.Axes[1].Detail == "" {
		t.Errorf("missing refused field: %+v", rep.Axes[1])
	}
}

// TestRescoreWeightZero: rescore follows the run's one weight rule: an axis
// of weight 0 is outside ms_pooled, and the interval of an MS with one
// weighted axis is that axis's own, so a run that published [0, 0.42]
// (weight 0 read as a resample of mean 0) does not reproduce.
func TestRescoreWeightZero(t *testing.T) {
	items := []Item{{Axis: "knowledge", ItemID: "k", Score: 1}, {Axis: "nlu", ItemID: "a", Score: 0.42}}
	m := &Manifest{Axes: map[string]AxisHeadline{
		"knowledge": {Metric: "acc_cloze", Score: f(1), N: 1, Weight: 0, Rescore: MethodMean, CI95: &[2]float64{1, 1}},
		"nlu":       {Metric: "acc_cloze", Score: f(0.42), N: 1, Weight: 1, Rescore: MethodMean, CI95: &[2]float64{0.3, 0.5}},
	}, MSAxes: []string{"knowledge", "nlu"}, MSPublic: f(0.42), MSPooled: f(0.42), MSCI95: &[2]float64{0.3, 0.5}, BootstrapResamples: 100, Seed: 1}
	if rep := Rescore(m, items); !rep.OK() {
		t.Errorf("not OK: %+v", rep.MS)
	}
	m.MSCI95 = &[2]float64{0, 0.42}
	if rep := Rescore(m, items); rep.OK() {
		t.Errorf("the interval [0, 0.42] reproduced: %+v", rep.MS)
	}
}
