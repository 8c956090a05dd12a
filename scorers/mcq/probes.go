package mcq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

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

// probeTally counts what shuffle_drop and unanswerable_drop need over the
// items that carry probe predictions. Both are ratios of counts, so no item
// is kept; addShuffle and addUnanswerable count exactly what
// probes.ShuffleDrop and probes.UnanswerableDrop count.
type probeTally struct {
	shuffleN       int // items with a shuffle probe
	shuffleOrigOK  int // of those, answered right as asked
	shuffleProbeOK int // of those, answered right shuffled
	unansN         int // items with an unanswerable probe
	unansCounted   int // of those, answered right as asked with a parsable probe answer
	unansSame      int // of those counted, the probe answer repeats the original letter
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
			pt.addShuffle(first == it.Gold, pick(r.Prediction, n, mode) == r.Gold)
		}
	}
	if raw, ok := p.Variants[probeKey("unanswerable")]; ok {
		var r probeResult
		if json.Unmarshal(raw, &r) == nil {
			pt.addUnanswerable(it.Gold, first, pick(r.Prediction, n, mode))
		}
	}
}

func (pt *probeTally) addShuffle(origOK, probeOK bool) {
	pt.shuffleN++
	if origOK {
		pt.shuffleOrigOK++
	}
	if probeOK {
		pt.shuffleProbeOK++
	}
}

// addUnanswerable leaves out, as probes.UnanswerableDrop does, items without
// a gold option, answered wrongly, or with an unparsable probe answer.
func (pt *probeTally) addUnanswerable(gold, origPick, probePick int) {
	pt.unansN++
	if gold < 0 || origPick != gold || probePick < 0 {
		return
	}
	pt.unansCounted++
	if probePick == origPick {
		pt.unansSame++
	}
}

// signals returns shuffle_drop and unanswerable_drop (nil when no item
// counts) with the number of items each probe ran on.
func (pt probeTally) signals() map[string]any {
	out := map[string]any{}
	if pt.shuffleN > 0 {
		out["shuffle_drop"] = float64(pt.shuffleOrigOK-pt.shuffleProbeOK) / float64(pt.shuffleN)
		out["shuffle_n"] = pt.shuffleN
	}
	if pt.unansN > 0 {
		var drop any // JSON null: no item answered right to test recall on
		if pt.unansCounted > 0 {
			drop = float64(pt.unansSame) / float64(pt.unansCounted)
		}
		out["unanswerable_drop"] = drop
		out["unanswerable_n"] = pt.unansN
	}
	return out
}
