package mcq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/probes"
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

// probeTally counts what shuffle_drop and unanswerable_drop need over the
// items that carry probe predictions; both are ratios of counts, so no item
// is kept.
type probeTally struct {
	shuffle probes.ShuffleCounts
	unans   probes.UnanswerableCounts
}

// add counts the probe variants of one item.
func (pt *probeTally) add(it scorers.Item, p scorers.Prediction, mode string) {
	if len(p.Variants) == 0 {
		return
	}
	n := len(it.Choices)
	first := pick(p, n, mode)
	if raw, ok := p.Variants[probeKey("shuffle")]; ok {
		var r probeResult
		if json.Unmarshal(raw, &r) == nil {
			pt.shuffle.Add(first == it.Gold, pick(r.Prediction, n, mode) == r.Gold)
		}
	}
	if raw, ok := p.Variants[probeKey("unanswerable")]; ok {
		var r probeResult
		if json.Unmarshal(raw, &r) == nil {
			pt.unans.Add(it.Gold, first, pick(r.Prediction, n, mode))
		}
	}
}

// signals returns shuffle_drop and unanswerable_drop (nil when no item
// counts) with the number of items each probe ran on.
func (pt probeTally) signals() map[string]any {
	out := map[string]any{}
	if pt.shuffle.N > 0 {
		out["shuffle_drop"] = nanToNil(pt.shuffle.Drop())
		out["shuffle_n"] = pt.shuffle.N
	}
	if pt.unans.N > 0 {
		// JSON null when no item was answered right to test recall on.
		out["unanswerable_drop"] = nanToNil(pt.unans.Drop())
		out["unanswerable_n"] = pt.unans.N
	}
	return out
}

// nanToNil is x, or nil (JSON null) when x is NaN: an undefined signal.
func nanToNil(x float64) any {
	if math.IsNaN(x) {
		return nil
	}
	return x
}
