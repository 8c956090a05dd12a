package scorers

import (
	"context"
	"time"

	"github.com/glossobench/glossobench/backends"
)

// Answerer asks a model for items' predictions, Workers items at a time, and
// hands the answers to Save every Every answers in the order they come back.
// A new item starts as soon as one ends: waiting for a whole checkpoint's
// items before starting the next ones left the model's slots empty at each
// checkpoint's tail.
type Answerer struct {
	Predict func(context.Context, Item) (Prediction, error)
	Workers int // items in flight
	Every   int // answers per Save
	// Save stores answers; its error stops new items and ends Answer,
	// with the answers it did not take left unsaved.
	Save func([]Prediction) error
	// Failed says what an item's error means: a nil stop keeps the error
	// as the item's prediction (it cannot be answered and is never asked
	// again); otherwise no new item starts and Answer ends with stop, the
	// first one returned unless a later one is fatal and it is not (a
	// model failing every request outweighs an outage met before).
	Failed func(it Item, err error) (stop error, fatal bool)
}

// Answer answers items until they are all answered, an item's failure or
// Save stops it, or ctx ends; what was answered is saved whatever ended it.
// Each prediction carries what its requests cost (backends.Usage).
func (a *Answerer) Answer(ctx context.Context, items []Item) error {
	type answer struct {
		it    Item
		pred  Prediction
		err   error
		usage backends.Usage // what the answer, or the failed attempt, cost
	}
	answers := make(chan answer, a.Workers)
	var pending []Prediction
	var stop, saveErr error
	fatal := false
	next, inflight := 0, 0
	for {
		for next < len(items) && inflight < a.Workers && stop == nil && saveErr == nil && ctx.Err() == nil {
			it := items[next]
			next++
			inflight++
			go func() {
				var u backends.Usage
				start := time.Now()
				p, err := a.Predict(backends.CountUsage(ctx, &u), it)
				u.LatencyMS = time.Since(start).Milliseconds()
				if err == nil {
					p.Usage = &u
				}
				answers <- answer{it, p, err, u}
			}()
		}
		if inflight == 0 {
			break
		}
		ans := <-answers
		inflight--
		if ans.err == nil {
			pending = append(pending, ans.pred)
		} else if s, f := a.Failed(ans.it, ans.err); s == nil {
			pending = append(pending, Prediction{ItemID: ans.it.ID, Error: ans.err.Error(), Usage: &ans.usage})
		} else if stop == nil || f && !fatal {
			stop, fatal = s, f
		}
		if len(pending) > 0 && len(pending) >= a.Every && saveErr == nil {
			if saveErr = a.Save(pending); saveErr == nil {
				pending = nil
			}
		}
	}
	if saveErr != nil {
		return saveErr
	}
	if len(pending) > 0 {
		if err := a.Save(pending); err != nil {
			return err
		}
	}
	if stop != nil {
		return stop
	}
	return ctx.Err()
}
