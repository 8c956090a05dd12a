package viewer

// This file is the viewer's only contact with the store layout of a run,
// which infra/runfiles owns: keys, result.json and manifest types, the JSON
// codec.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
)

var (
	manifestKey      = runfiles.ManifestKey
	axisItemsKey     = runfiles.ItemsKey
	axisScoresKey    = runfiles.ScoresKey
	axisShardsPrefix = runfiles.ShardsPrefix
)

// listRuns returns the run ids under runs/ that have a result.json or a
// manifest.json, with whether the result is there.
func listRuns(ctx context.Context, st store.Store) (map[string]bool, error) {
	keys, err := st.List(ctx, "runs/")
	if err != nil {
		return nil, err
	}
	runs := map[string]bool{}
	for _, k := range keys {
		parts := strings.Split(strings.TrimPrefix(k, "runs/"), "/")
		if len(parts) != 2 {
			continue
		}
		switch parts[1] {
		case "result.json":
			runs[parts[0]] = true
		case "manifest.json":
			if !runs[parts[0]] {
				runs[parts[0]] = false
			}
		}
	}
	return runs, nil
}

// readResult reads a run's result.json.
func readResult(ctx context.Context, st store.Store, run string) (*runfiles.Result, error) {
	key := runfiles.ResultKey(run)
	data, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	var res runfiles.Result
	if err := runfiles.DecodeJSON(key, data, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// readPlan reads the plan part of a run's manifest.json (for runs that have
// not written their result yet).
func readPlan(ctx context.Context, st store.Store, run string) (*runfiles.Plan, error) {
	key := manifestKey(run)
	data, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	var m struct {
		Plan runfiles.Plan `json:"plan"`
	}
	if err := runfiles.DecodeJSON(key, data, &m); err != nil {
		return nil, err
	}
	return &m.Plan, nil
}

// scoreLine is the part of a scores.jsonl record (scorers.ItemScore) the
// filters need; decoding only it keeps a scan of a large axis cheap.
type scoreLine struct {
	ItemID  string  `json:"item_id"`
	Source  string  `json:"source"`
	Score   float64 `json:"score"`
	Flagged string  `json:"flagged"`
	Fields  struct {
		ParseFail bool `json:"parse_fail"` // the MCQ scorer's parse failure, kept beside its flag
	} `json:"fields"`
}

// flags are the item's flags: its flag and, when its fields say so, parse_fail.
func (s scoreLine) flags() []string {
	var f []string
	if s.Flagged != "" {
		f = append(f, s.Flagged)
	}
	if s.Fields.ParseFail && s.Flagged != "parse_fail" {
		f = append(f, "parse_fail")
	}
	return f
}

// datasetOf is the dataset part of an item id, which scorers.Item.ID
// documents as "<dataset>/<row>".
func datasetOf(id string) string {
	if i := strings.IndexByte(id, '/'); i >= 0 {
		return id[:i]
	}
	return id
}

// eachLine calls fn with every non-blank line of the object under key, read
// a line at a time; fn returns false to stop early. Errors name key:line.
func eachLine(ctx context.Context, st store.Store, key string, fn func(line int, b []byte) (bool, error)) error {
	r, err := st.Open(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	return scanLines(r, key, fn)
}

func scanLines(r io.Reader, key string, fn func(line int, b []byte) (bool, error)) error {
	err := runfiles.EachLine(r, key, func(line int, b []byte) error {
		more, err := fn(line, b)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", key, line, err)
		}
		if !more {
			return errStopScan
		}
		return nil
	})
	if errors.Is(err, errStopScan) {
		return nil
	}
	return err
}

// errStopScan ends scanLines early when fn has seen what it wants.
var errStopScan = errors.New("stop scan")

// eachScore streams an axis's scores.jsonl.
func eachScore(ctx context.Context, st store.Store, run, axis string, fn func(scoreLine, []byte) (bool, error)) error {
	return eachLine(ctx, st, axisScoresKey(run, axis), func(_ int, b []byte) (bool, error) {
		var s scoreLine
		if err := decodeScoreLine(b, &s); err != nil {
			return false, err
		}
		return fn(s, b)
	})
}

// quickID reads the id of a JSONL record written by encoding/json from a
// struct whose first field is the id ({"id":"..." or {"item_id":"...}), so a
// scan can skip the records it does not want without decoding them; ok is
// false when the line does not start that way (the caller decodes it).
func quickID(b []byte) (id string, ok bool) {
	for _, p := range []string{`{"id":"`, `{"item_id":"`} {
		if rest, found := bytes.CutPrefix(b, []byte(p)); found {
			end := bytes.IndexByte(rest, '"')
			if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
				return "", false
			}
			return string(rest[:end]), true
		}
	}
	return "", false
}

// findItems returns the items of want from an axis's items.jsonl, stopping
// as soon as all are found.
func findItems(ctx context.Context, st store.Store, run, axis string, want map[string]bool) (map[string]scorers.Item, error) {
	got := map[string]scorers.Item{}
	err := eachLine(ctx, st, axisItemsKey(run, axis), func(_ int, b []byte) (bool, error) {
		if id, ok := quickID(b); ok && !want[id] {
			return true, nil
		}
		var it scorers.Item
		if err := json.Unmarshal(b, &it); err != nil {
			return false, err
		}
		if want[it.ID] {
			got[it.ID] = it
		}
		return len(got) < len(want), nil
	})
	return got, err
}

// predRecord is a checkpointed prediction; a judged axis's rated-*.jsonl
// records are predictions whose "judge" variant holds the ratings.
type predRecord = scorers.Prediction

// predKeys lists an axis's prediction checkpoints in shard and part order,
// the rated (judged) ones of a shard after its plain ones so they win.
func predKeys(ctx context.Context, st store.Store, run, axis string) ([]string, error) {
	keys, err := st.List(ctx, axisShardsPrefix(run, axis))
	if err != nil {
		return nil, err
	}
	// Only the axis's checkpoint generation: an axis started over on a new
	// model (--allow-new-model) shows none of the earlier model's answers.
	gen, err := runfiles.InStore(ctx, st, run).Generation(axis)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		base := path.Base(k)
		if runfiles.IsCheckpoint(base, runfiles.Answers, gen) || runfiles.IsCheckpoint(base, runfiles.Rated, gen) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		da, db := path.Dir(a), path.Dir(b)
		if da != db {
			return strings.Compare(da, db)
		}
		ra, rb := strings.HasPrefix(path.Base(a), "rated-"), strings.HasPrefix(path.Base(b), "rated-")
		if ra != rb {
			if ra {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	return out, nil
}

// findPredictions returns the predictions of want. A shard's rated record
// replaces its plain one; the scan stops at the end of the shard in which
// the last wanted item was found rated or, for an axis without ratings, as
// soon as all are found.
func findPredictions(ctx context.Context, st store.Store, run, axis string, want map[string]bool) (map[string]predRecord, error) {
	keys, err := predKeys(ctx, st, run, axis)
	if err != nil {
		return nil, err
	}
	judged := slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(path.Base(k), "rated-") })
	got := map[string]predRecord{}
	rated := map[string]bool{}
	done := func() bool {
		if judged {
			return len(rated) == len(want)
		}
		return len(got) == len(want)
	}
	for _, k := range keys {
		if done() {
			break
		}
		isRated := strings.HasPrefix(path.Base(k), "rated-")
		err := eachLine(ctx, st, k, func(_ int, b []byte) (bool, error) {
			if id, ok := quickID(b); ok && !want[id] {
				return true, nil
			}
			var p predRecord
			if err := json.Unmarshal(b, &p); err != nil {
				return false, err
			}
			if want[p.ItemID] {
				got[p.ItemID] = p
				if isRated {
					rated[p.ItemID] = true
				}
			}
			return !done(), nil
		})
		if err != nil {
			return nil, err
		}
	}
	return got, nil
}

// keptItemIDs lists the ids of the items dedup kept (the shards' items.jsonl),
// in shard order.
func keptItemIDs(ctx context.Context, st store.Store, run, axis string) ([]string, error) {
	keys, err := st.List(ctx, axisShardsPrefix(run, axis))
	if err != nil {
		return nil, err
	}
	keys = slices.DeleteFunc(keys, func(k string) bool { return path.Base(k) != "items.jsonl" })
	slices.Sort(keys)
	var ids []string
	for _, k := range keys {
		err := eachLine(ctx, st, k, func(_ int, b []byte) (bool, error) {
			id, ok := quickID(b)
			if !ok {
				var it scorers.Item
				if err := json.Unmarshal(b, &it); err != nil {
					return false, err
				}
				id = it.ID
			}
			ids = append(ids, id)
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// usages reads the usage of every answer of an axis from its prediction
// checkpoints (not the judges' rated copies), decoding only id and usage.
func usages(ctx context.Context, st store.Store, run, axis string) (map[string]backends.Usage, error) {
	keys, err := predKeys(ctx, st, run, axis)
	if err != nil {
		return nil, err
	}
	out := map[string]backends.Usage{}
	for _, k := range keys {
		if !strings.HasPrefix(path.Base(k), "pred-") {
			continue
		}
		err := eachLine(ctx, st, k, func(_ int, b []byte) (bool, error) {
			var p usageLine
			if err := decodeUsageLine(b, &p); err != nil {
				return false, err
			}
			if p.Usage != nil {
				out[p.ItemID] = *p.Usage
			}
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkpointed counts the answers in an axis's prediction checkpoints
// (pred-*.jsonl, one line an item), as they land during a run.
func checkpointed(ctx context.Context, st store.Store, run, axis string) (int, error) {
	keys, err := predKeys(ctx, st, run, axis)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		if !strings.HasPrefix(path.Base(k), "pred-") {
			continue
		}
		err := eachLine(ctx, st, k, func(int, []byte) (bool, error) {
			n++
			return true, nil
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
