package viewer

import (
	"context"
	"encoding/json"
	"net/http"
	"path"
	"strings"

	"github.com/glossobench/glossobench/backends"
)

// attemptRow is an item whose answer failed or needed retries.
type attemptRow struct {
	ItemID      string
	Error       string
	Unsupported bool
	Usage       *backends.Usage
}

// attemptsPage is the failed attempts and retries of an axis.
type attemptsPage struct {
	Run, Axis string
	Answered  int // predictions checkpointed
	Failed    int // of them, those that hold an error instead of an answer
	Retried   int // of them, those whose requests were retried or failed before an answer
	Attempts  int // failed request attempts, all items
	Retries   int // retries, all items
	Rows      []attemptRow
}

// attempts reads an axis's prediction checkpoints (not the judges' rated
// copies) for the items that failed or whose requests failed or were retried.
func (s *Server) attempts(ctx context.Context, run, axis string) (*attemptsPage, error) {
	keys, err := predKeys(ctx, s.st, run, axis)
	if err != nil {
		return nil, err
	}
	pg := &attemptsPage{Run: run, Axis: axis}
	for _, k := range keys {
		if !strings.HasPrefix(path.Base(k), "pred-") {
			continue
		}
		err := eachLine(ctx, s.st, k, func(_ int, b []byte) (bool, error) {
			var p struct {
				ItemID      string          `json:"item_id"`
				Error       string          `json:"error"`
				Unsupported bool            `json:"unsupported"`
				Usage       *backends.Usage `json:"usage"`
			}
			if err := json.Unmarshal(b, &p); err != nil {
				return false, err
			}
			pg.Answered++
			troubled := p.Error != "" || p.Unsupported
			if p.Error != "" {
				pg.Failed++
			}
			if u := p.Usage; u != nil {
				pg.Attempts += u.FailedRequests
				pg.Retries += u.Retries
				if p.Error == "" && (u.FailedRequests > 0 || u.Retries > 0) {
					pg.Retried++
					troubled = true
				}
			}
			if troubled {
				pg.Rows = append(pg.Rows, attemptRow{ItemID: p.ItemID, Error: p.Error, Unsupported: p.Unsupported, Usage: p.Usage})
			}
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return pg, nil
}

func (s *Server) failures(w http.ResponseWriter, r *http.Request) {
	pg, err := s.attempts(r.Context(), r.PathValue("run"), r.PathValue("axis"))
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, "errors.html", pg)
}
