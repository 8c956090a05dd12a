package mcq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/probes"
)

// probeKey is the Prediction.Variants key of a probe's result.
func probeKey(name string) string { return "probe_" + name }

// probeResult is one probe's variant gold and the model's prediction on it.
type probeResult struct {
	Gold       int                `json:"gold"` // -1: no option is right (unanswerable)
	Prediction scorers.Prediction `json:"prediction"`
}

// PredictProbes runs the configured probes (shuffle, unanswerable) on one item
// and returns them as prediction variants. They are inferred with the item, so
// they are checkpointed with it and count against the same budget.
func (a *Axis) PredictProbes(ctx context.Context, b backends.Backend, it scorers.Item, pool *probes.Pool, names []string, opt scorers.PredictOptions) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for _, name := range names {
		var v scorers.Item
		switch name {
		case "shuffle":
			v = probes.Shuffle(it, uint64(opt.Seed))
		case "unanswerable":
			var err error
			v, err = pool.Unanswerable(it, uint64(opt.Seed))
			if errors.Is(err, probes.ErrNoReplacement) {
				continue // fixed-label sets (NLI) have no plausible wrong option to swap in
			}
			if err != nil {
				return nil, fmt.Errorf("probe unanswerable: %w", err)
			}
		default:
			return nil, fmt.Errorf("unknown probe %q", name)
		}
		v.Prompt = Render(v)
		p, err := a.Predict(ctx, b, v, opt)
		if err != nil {
			return nil, fmt.Errorf("probe %s: %w", name, err)
		}
		raw, err := json.Marshal(probeResult{Gold: v.Gold, Prediction: p})
		if err != nil {
			return nil, err
		}
		out[probeKey(name)] = raw
	}
	return out, nil
}

// pick is the option the headline scoring mode chose, or -1.
func pick(p scorers.Prediction, n int, mode string) int {
	if mode == "cloze" {
		if len(p.LogLiks) != n {
			return -1
		}
		ll := make([]float64, n)
		for i, l := range p.LogLiks {
			ll[i] = l.LogProb
		}
		best, _ := argmax(ll)
		return best
	}
	if len(p.Generations) == 0 {
		return -1
	}
	i, ok := ParseLetter(p.Generations[0].Text, n)
	if !ok {
		return -1
	}
	return i
}

// probeSignals computes shuffle_drop and unanswerable_drop over the items
// that carry probe predictions.
func probeSignals(items []scorers.Item, preds []scorers.Prediction, mode string) map[string]any {
	out := map[string]any{}
	var orig, shuf []bool
	var gold, origPick, probePick []int
	for i, it := range items {
		n := len(it.Choices)
		first := pick(preds[i], n, mode)
		if raw, ok := preds[i].Variants[probeKey("shuffle")]; ok {
			var r probeResult
			if json.Unmarshal(raw, &r) == nil {
				orig = append(orig, first == it.Gold)
				shuf = append(shuf, pick(r.Prediction, n, mode) == r.Gold)
			}
		}
		if raw, ok := preds[i].Variants[probeKey("unanswerable")]; ok {
			var r probeResult
			if json.Unmarshal(raw, &r) == nil {
				gold = append(gold, it.Gold)
				origPick = append(origPick, first)
				probePick = append(probePick, pick(r.Prediction, n, mode))
			}
		}
	}
	if len(orig) > 0 {
		out["shuffle_drop"] = nanToNil(probes.ShuffleDrop(orig, shuf))
		out["shuffle_n"] = len(orig)
	}
	if len(gold) > 0 {
		out["unanswerable_drop"] = nanToNil(probes.UnanswerableDrop(gold, origPick, probePick))
		out["unanswerable_n"] = len(gold)
	}
	return out
}

func nanToNil(x float64) any {
	if math.IsNaN(x) {
		return nil
	}
	return x
}
