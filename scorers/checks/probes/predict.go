package probes

import (
	"context"
	"encoding/json"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
)

// Prober is implemented by the axes that run probes beside each item (the
// multiple-choice axes, scorers/mcq): the probe variants of an item,
// inferred with it and stored in its prediction's Variants.
type Prober interface {
	scorers.Axis
	PredictProbes(ctx context.Context, b backends.Backend, it scorers.Item, pool *Pool, names []string, opt scorers.PredictOptions) (map[string]json.RawMessage, error)
}

// Predict is the axis's prediction of an item with the named probes' variants
// inferred beside it, so they share its checkpoint and its budget.
func Predict(ax Prober, b backends.Backend, pool *Pool, names []string, opt scorers.PredictOptions) func(context.Context, scorers.Item) (scorers.Prediction, error) {
	return func(ctx context.Context, it scorers.Item) (scorers.Prediction, error) {
		p, err := ax.Predict(ctx, b, it, opt)
		if err != nil {
			return p, err
		}
		p.Variants, err = ax.PredictProbes(ctx, b, it, pool, names, opt)
		return p, err
	}
}
