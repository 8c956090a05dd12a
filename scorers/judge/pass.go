package judge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/scorers"
)

// Rated is implemented by the axes whose responses a judge ensemble rates
// (scorers/mt): the requests of their items' responses.
type Rated interface {
	JudgeRequests(items []scorers.Item, preds []scorers.Prediction) []Request
}

// Pass is one judging of an axis's responses, shard by shard and chunk by
// chunk, and what it did, for the stage's note. Ratings are saved a chunk
// at a time, so a resumed run never pays for a rating twice.
type Pass struct {
	Ensemble *Ensemble
	Requests func([]scorers.Item, []scorers.Prediction) []Request
	Every    int // responses per chunk
	// Save checkpoints a chunk of a shard's rated predictions, once the
	// pass has counted them; counts are what each judge did in the chunk.
	Save func(shard int, rated []scorers.Prediction, counts []JudgeCount) error

	Rated       int  // responses this pass rated and saved
	Earlier     int  // responses an earlier attempt rated and saved
	Unrated     int  // responses left unrated when judging stopped
	Unrequested int  // items with no generated response to rate
	Stopped     bool // ctx ended before every response was rated
	Counts      []JudgeCount
}

// Shard rates a shard's answered items (preds) that have no saved rating
// (rated). Judging stops inside a chunk, in-flight requests included, when
// ctx ends: the items every judge rated in full are saved, and the
// responses left are counted unrated, not asked. A judge failing every
// request alike ends it with a *Failure.
func (p *Pass) Shard(ctx context.Context, shard int, items []scorers.Item, preds, rated map[string]scorers.Prediction) error {
	var todoItems []scorers.Item
	var todoPreds []scorers.Prediction
	for _, it := range items {
		pr, answered := preds[it.ID]
		if r, ok := rated[it.ID]; ok {
			p.Earlier += len(p.Requests([]scorers.Item{it}, []scorers.Prediction{r}))
			continue
		}
		if answered {
			todoItems, todoPreds = append(todoItems, it), append(todoPreds, pr)
		}
	}
	for start := 0; start < len(todoItems); start += p.Every {
		end := min(start+p.Every, len(todoItems))
		ps := todoPreds[start:end]
		reqs := p.Requests(todoItems[start:end], ps)
		if p.Stopped = p.Stopped || ctx.Err() != nil; p.Stopped {
			p.Unrated += len(reqs) // counted, not asked
			continue
		}
		c, err := p.Ensemble.RateInto(ctx, reqs, ps)
		var f *Failure
		if errors.As(err, &f) || (err != nil && ctx.Err() == nil) {
			return err
		}
		if err != nil {
			// Stopped within the chunk: keep the items every judge rated in
			// full; the rest of the chunk stays unrated.
			p.Stopped = true
			ps, reqs = p.ratedInFull(ps, reqs)
			if len(ps) == 0 {
				continue
			}
		}
		p.Counts = addCounts(p.Counts, c)
		p.Rated += len(reqs)
		p.Unrequested += len(ps) - distinctItems(reqs)
		if err := p.Save(shard, ps, c); err != nil {
			return err
		}
	}
	return nil
}

// ratedInFull keeps of ps the predictions every judge rated for every one of
// their requests, with those requests, and counts the rest unrated.
func (p *Pass) ratedInFull(ps []scorers.Prediction, reqs []Request) ([]scorers.Prediction, []Request) {
	var keep []scorers.Prediction
	var kept []Request
	for _, pr := range ps {
		mine := slices.DeleteFunc(slices.Clone(reqs), func(r Request) bool { return r.ItemID != pr.ItemID })
		if p.ratedByAll(mine, pr) {
			keep, kept = append(keep, pr), append(kept, mine...)
		}
	}
	p.Unrated += len(reqs) - len(kept)
	return keep, kept
}

// ratedByAll reports whether every judge rated every request of pr's item.
func (p *Pass) ratedByAll(reqs []Request, pr scorers.Prediction) bool {
	for _, j := range p.Ensemble.Judges {
		m, err := Missing(reqs, []scorers.Prediction{pr}, j.cfg.Name)
		if err != nil || len(m) > 0 {
			return false
		}
	}
	return true
}

// Note says what the stage did, counting what earlier attempts rated: the
// note is the stage's, not an attempt's. overlay marks a verifiable axis's
// judge overlay; excluded are the judges left out as the model's family.
func (p *Pass) Note(overlay bool, excluded []string) string {
	names := make([]string, len(p.Ensemble.Judges))
	for i, j := range p.Ensemble.Judges {
		names[i] = j.cfg.Name
	}
	by := strings.Join(names, ", ")
	if p.Earlier > 0 {
		by += fmt.Sprintf(" (%d by an earlier attempt)", p.Earlier)
	}
	note := fmt.Sprintf("judge: %d responses rated by %s", p.Rated+p.Earlier, by)
	if p.Stopped {
		note = fmt.Sprintf("judge: judging stopped at the deadline: %d responses rated by %s and kept, %d unrated", p.Rated+p.Earlier, by, p.Unrated)
	}
	if p.Unrequested > 0 {
		note += fmt.Sprintf(" (%d items have no generated response to rate)", p.Unrequested)
	}
	for _, c := range p.Counts {
		if c.ParseFail+c.Dropped > 0 {
			note += fmt.Sprintf("; %s: %d valid, %d parse_fail, %d dropped", c.Judge, c.Valid, c.ParseFail, c.Dropped)
		}
	}
	if overlay {
		note = "judge overlay: " + note + " (judge_quality is secondary; the verifiable score stays the headline)"
	}
	if len(excluded) > 0 {
		note += fmt.Sprintf("; self-judge excluded (same family as the model): %s", strings.Join(excluded, ", "))
	}
	return note
}

// addCounts adds one chunk's per-judge counts to the running ones.
func addCounts(into, c []JudgeCount) []JudgeCount {
	if into == nil {
		return append([]JudgeCount(nil), c...)
	}
	for k := range c {
		into[k].Reused += c[k].Reused
		into[k].Asked += c[k].Asked
		into[k].Valid += c[k].Valid
		into[k].ParseFail += c[k].ParseFail
		into[k].Dropped += c[k].Dropped
	}
	return into
}

// distinctItems counts the items the requests are about (MT asks once per turn).
func distinctItems(reqs []Request) int {
	seen := map[string]bool{}
	for _, r := range reqs {
		seen[r.ItemID] = true
	}
	return len(seen)
}
