package scorers_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/glossobench/glossobench/scorers"
)

// A model failure met after an outage is what the shard ends with, an
// item's own error is kept as its prediction, and every answer is saved in
// checkpoints of Every.
func TestAnswererStopsOnTheFatalFailure(t *testing.T) {
	outage, broken := errors.New("connection refused"), errors.New("NaN")
	var items []scorers.Item
	for i := range 6 {
		items = append(items, scorers.Item{ID: fmt.Sprint(i)})
	}
	var saved [][]scorers.Prediction
	a := scorers.Answerer{
		Workers: 1, Every: 2,
		Predict: func(_ context.Context, it scorers.Item) (scorers.Prediction, error) {
			switch it.ID {
			case "1":
				return scorers.Prediction{}, errors.New("too long")
			case "2":
				return scorers.Prediction{}, outage
			}
			return scorers.Prediction{ItemID: it.ID}, nil
		},
		Save: func(p []scorers.Prediction) error {
			saved = append(saved, p)
			return nil
		},
		Failed: func(_ scorers.Item, err error) (error, bool) {
			switch err {
			case outage:
				return err, false
			case broken:
				return err, true
			}
			return nil, false
		},
	}
	if err := a.Answer(context.Background(), items); err != outage {
		t.Errorf("Answer = %v, want the outage", err)
	}
	// Items 0 and 1 (its error kept) are saved together; item 2's outage
	// stops new items, so 3-5 are never asked.
	if len(saved) != 1 || len(saved[0]) != 2 || saved[0][1].Error != "too long" || saved[0][0].Usage == nil {
		t.Errorf("saved %+v", saved)
	}

	// Two items in flight: the NaN comes back after the outage was taken.
	saved = nil
	a.Workers = 2
	taken := make(chan struct{})
	a.Predict = func(_ context.Context, it scorers.Item) (scorers.Prediction, error) {
		if it.ID == "0" {
			return scorers.Prediction{}, outage
		}
		<-taken
		return scorers.Prediction{}, broken
	}
	failed := a.Failed
	a.Failed = func(it scorers.Item, err error) (error, bool) {
		if err == outage {
			close(taken)
		}
		return failed(it, err)
	}
	if err := a.Answer(context.Background(), items); err != broken {
		t.Errorf("Answer = %v, want the model failure that came after the outage", err)
	}
	if len(saved) != 0 {
		t.Errorf("saved %+v, want nothing", saved)
	}
}
