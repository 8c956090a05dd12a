// Package release reads a finished run folder and turns it into a release
// bundle: one reproducible JSONL of scored items plus a manifest, from which
// a third party re-derives every headline (Rescore) without the harness,
// the model or the raw outputs.
//
// A run folder (RUNDIR) is <store>/runs/<run_id> on a local store:
//
//	RUNDIR/result.json             activities.Result
//	RUNDIR/manifest.json           the resolved config and plan (optional)
//	RUNDIR/<axis>/scores.jsonl     scorers.ItemScore, one per line
//	RUNDIR/<axis>/items.jsonl      scorers.Item, one per line
//	RUNDIR/<axis>/shards/*/pred-*.jsonl  predictions (read only for --include-raw)
package release

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/scorers"
)

// Run is a finished run as read from its folder.
type Run struct {
	Dir    string
	Result activities.Result
	// Config is the resolved config from manifest.json; nil when the run
	// folder has no manifest.
	Config *config.Config
	// Axes holds, per axis of the result, its stored items and item scores.
	Axes map[string]*AxisData
}

// AxisData is one axis's stored items and per-item scores.
type AxisData struct {
	Scores []scorers.ItemScore
	Items  map[string]scorers.Item // by item id; empty when items.jsonl is absent
}

// AxisNames returns the result's axes in sorted order.
func (r *Run) AxisNames() []string {
	names := make([]string, 0, len(r.Result.Axes))
	for n := range r.Result.Axes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Dataset returns the config entry of an axis's dataset, when known.
func (r *Run) Dataset(axis, name string) (scorers.DatasetConfig, bool) {
	if r.Config == nil {
		return scorers.DatasetConfig{}, false
	}
	for _, d := range r.Config.Axes[axis].Datasets {
		if d.Name == name {
			return d, true
		}
	}
	return scorers.DatasetConfig{}, false
}

// runManifest mirrors runs/<run>/manifest.json; only the config is read.
type runManifest struct {
	Config *config.Config `json:"config"`
}

// LoadRun reads a run folder. result.json is required; manifest.json and an
// axis's items.jsonl are optional, its scores.jsonl is required when the
// axis has a score. Errors name the file, and the line and field where the
// content is at fault.
//
// Files are read through an os.Root: a symlink inside the run folder that
// points out of it is an error, so a bundle never carries a file from
// elsewhere on the machine.
func LoadRun(dir string) (*Run, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	r := &Run{Dir: dir, Axes: map[string]*AxisData{}}
	resPath := filepath.Join(dir, "result.json")
	data, err := readIn(root, "result.json")
	if err != nil {
		return nil, err
	}
	if err := DecodeJSON(resPath, data, &r.Result); err != nil {
		return nil, err
	}
	if r.Result.RunID == "" {
		return nil, fmt.Errorf("%s: field run_id is missing or empty", resPath)
	}
	if r.Result.ModelID == "" {
		return nil, fmt.Errorf("%s: field model_id is missing or empty", resPath)
	}
	manPath := filepath.Join(dir, "manifest.json")
	if data, err := readIn(root, "manifest.json"); err == nil {
		var m runManifest
		if err := DecodeJSON(manPath, data, &m); err != nil {
			return nil, err
		}
		r.Config = m.Config
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, axis := range r.AxisNames() {
		if !safeName(axis) {
			return nil, fmt.Errorf("%s: axes: axis name %q is not a plain name", resPath, axis)
		}
		rep := r.Result.Axes[axis]
		if rep.Axis != "" && rep.Axis != axis {
			return nil, fmt.Errorf("%s: axes.%s.axis is %q", resPath, axis, rep.Axis)
		}
		ad := &AxisData{Items: map[string]scorers.Item{}}
		sp := filepath.Join(dir, axis, "scores.jsonl")
		if data, err := readIn(root, axis+"/scores.jsonl"); err == nil {
			if ad.Scores, err = DecodeJSONL[scorers.ItemScore](sp, data); err != nil {
				return nil, err
			}
			seen := map[string]int{}
			for i, s := range ad.Scores {
				if s.ItemID == "" {
					return nil, fmt.Errorf("%s: item %d: field item_id is missing or empty", sp, i+1)
				}
				if j, dup := seen[s.ItemID]; dup {
					return nil, fmt.Errorf("%s: item %d: item_id %q already scored by item %d", sp, i+1, s.ItemID, j)
				}
				seen[s.ItemID] = i + 1
			}
		} else if !errors.Is(err, fs.ErrNotExist) || rep.Score != nil {
			return nil, err
		}
		ip := filepath.Join(dir, axis, "items.jsonl")
		if data, err := readIn(root, axis+"/items.jsonl"); err == nil {
			items, err := DecodeJSONL[scorers.Item](ip, data)
			if err != nil {
				return nil, err
			}
			for _, it := range items {
				ad.Items[it.ID] = it
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		r.Axes[axis] = ad
	}
	return r, nil
}

// readIn reads a file of a root; a failure names the file by its full path,
// as os.ReadFile would.
func readIn(root *os.Root, name string) ([]byte, error) {
	data, err := root.ReadFile(name)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Path = filepath.Join(root.Name(), filepath.FromSlash(name))
	}
	return data, err
}

// safeName reports whether s is usable as one path segment.
func safeName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`+"\x00")
}

// DecodeJSON decodes one JSON document; errors name the file, the line and
// the field at fault.
func DecodeJSON(name string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return jsonError(name, data, 0, dec, err)
	}
	if dec.More() {
		return fmt.Errorf("%s:%d: more than one JSON value", name, lineAt(data, dec.InputOffset()))
	}
	return nil
}

// DecodeJSONL reads one JSON object per line, skipping blank lines.
func DecodeJSONL[T any](name string, data []byte) ([]T, error) {
	var rows []T
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(text))
		if err := dec.Decode(&v); err != nil {
			return nil, jsonError(name, text, line, dec, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s:%d: more than one JSON value on the line", name, line)
		}
		rows = append(rows, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return rows, nil
}

// jsonError names the file, line and field of a decoding error. line is the
// line of data within the file for JSONL (0: data is the whole file).
func jsonError(name string, data []byte, line int, dec *json.Decoder, err error) error {
	at := func(off int64) int {
		if line > 0 {
			return line
		}
		return lineAt(data, off)
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return fmt.Errorf("%s:%d: field %s: want %s, got %s", name, at(te.Offset), te.Field, te.Type, te.Value)
	case errors.As(err, &se):
		return fmt.Errorf("%s:%d: %s", name, at(se.Offset), se.Error())
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(data)) == 0:
		return fmt.Errorf("%s: empty", name)
	}
	return fmt.Errorf("%s:%d: %s", name, at(dec.InputOffset()), strings.TrimPrefix(err.Error(), "json: "))
}

func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}
