package runfiles

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
)

// Folder is one run's folder, runs/<run>: a directory on disk (a local
// store's, or a copy) or a run in a store. Every reader of a finished run
// reads it through a Folder. A file that is not there is an error wrapping
// fs.ErrNotExist.
type Folder struct {
	where string
	local bool  // where is a directory path
	fsys  fs.FS // nil for a run in a store
	open  func(name string) (io.ReadCloser, error)
	list  func(prefix string) ([]string, error) // a run in a store: its file names under prefix
	close func() error
}

// Dir opens the run folder at path. Files are read through an os.Root: a
// symlink inside the folder that points out of it is an error, so nothing
// from elsewhere on the machine is read as part of the run.
func Dir(path string) (*Folder, error) {
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	f := FS(root.FS(), path)
	f.local, f.close = true, root.Close
	return f, nil
}

// FS is the run folder held by fsys (a test's fstest.MapFS, say); where
// names it in messages.
func FS(fsys fs.FS, where string) *Folder {
	open := func(name string) (io.ReadCloser, error) {
		r, err := fsys.Open(name)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = where + "/" + name
		}
		return r, err
	}
	return &Folder{where: where, fsys: fsys, open: open, close: func() error { return nil }}
}

// Glob returns the names of the folder's files matching pattern (fs.Glob's
// syntax), sorted.
func (f *Folder) Glob(pattern string) ([]string, error) {
	if f.fsys != nil {
		return fs.Glob(f.fsys, pattern)
	}
	// A store lists by prefix: list the part before the first wildcard,
	// then match whole names.
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	names, err := f.list(pattern[:strings.IndexAny(pattern+"*", "*?[\\")])
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if ok, _ := path.Match(pattern, n); ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// InStore is the folder of run in st.
func InStore(ctx context.Context, st store.Store, run string) *Folder {
	prefix := RunPrefix(run)
	open := func(name string) (io.ReadCloser, error) {
		r, err := st.Open(ctx, prefix+name)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
		}
		return r, err
	}
	list := func(p string) ([]string, error) {
		keys, err := st.List(ctx, prefix+p)
		for i, k := range keys {
			keys[i] = strings.TrimPrefix(k, prefix)
		}
		return keys, err
	}
	return &Folder{where: st.Describe() + "/" + prefix[:len(prefix)-1], open: open, list: list, close: func() error { return nil }}
}

// Close releases the folder.
func (f *Folder) Close() error { return f.close() }

// Where names the folder in messages.
func (f *Folder) Where() string { return f.where }

// Path names one file of the folder in messages.
func (f *Folder) Path(name string) string {
	if f.local {
		return filepath.Join(f.where, filepath.FromSlash(name))
	}
	return f.where + "/" + name
}

// ReadFile reads one file of the folder whole.
func (f *Folder) ReadFile(name string) ([]byte, error) {
	r, err := f.open(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path(name), err)
	}
	return b.Bytes(), nil
}

// Result reads result.json; errors name the file, line and field.
func (f *Folder) Result() (*Result, error) {
	data, err := f.ReadFile(ResultName)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := DecodeJSON(f.Path(ResultName), data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Manifest reads manifest.json.
func (f *Folder) Manifest(into any) error {
	data, err := f.ReadFile(ManifestName)
	if err != nil {
		return err
	}
	return DecodeJSON(f.Path(ManifestName), data, into)
}

// EachScore calls fn with every item score of an axis, a line at a time,
// after checking that each has an item id and that no item is scored twice.
func (f *Folder) EachScore(axis string, fn func(scorers.ItemScore) error) error {
	name := ScoresName(axis)
	r, err := f.open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	path := f.Path(name)
	seen := map[string]int{}
	// The outer Score shadows the embedded one, so a line without a score
	// is told from a score of 0.
	type scoreLine struct {
		scorers.ItemScore
		Score *float64 `json:"score"`
	}
	return ScanJSONL(r, path, func(line int, l scoreLine) error {
		s := l.ItemScore
		if l.Score == nil {
			return fmt.Errorf("%s:%d: field score is missing or null", path, line)
		}
		s.Score = *l.Score
		if s.ItemID == "" {
			return fmt.Errorf("%s:%d: field item_id is missing or empty", path, line)
		}
		if prev, dup := seen[s.ItemID]; dup {
			return fmt.Errorf("%s:%d: item %q scored twice (first on line %d)", path, line, s.ItemID, prev)
		}
		seen[s.ItemID] = line
		return fn(s)
	})
}

// Scores reads every item score of an axis (see EachScore).
func (f *Folder) Scores(axis string) ([]scorers.ItemScore, error) {
	var out []scorers.ItemScore
	err := f.EachScore(axis, func(s scorers.ItemScore) error {
		out = append(out, s)
		return nil
	})
	return out, err
}

// Items reads every loaded item of an axis.
func (f *Folder) Items(axis string) ([]scorers.Item, error) {
	name := ItemsName(axis)
	r, err := f.open(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []scorers.Item
	err = ScanJSONL(r, f.Path(name), func(_ int, it scorers.Item) error {
		out = append(out, it)
		return nil
	})
	return out, err
}

// EachPrediction calls fn with every checkpointed prediction of an axis as
// its JSON line, in file order, naming the file and line; a prediction
// without an item id is an error.
func (f *Folder) EachPrediction(axis string, fn func(itemID string, raw json.RawMessage) error) error {
	gen, err := f.Generation(axis)
	if err != nil {
		return err
	}
	names, err := f.Glob(axis + "/shards/*/" + CheckpointKind(Answers, gen) + "*.jsonl")
	if err != nil {
		return err
	}
	names = slices.DeleteFunc(names, func(n string) bool { return !IsCheckpoint(path.Base(n), Answers, gen) })
	return f.eachPredictionIn(names, fn)
}

// IsCheckpoint reports whether a shard file's name is a checkpoint of the
// kind in generation gen: generation 0's prefix ("pred-") also begins a
// later generation's names ("pred-g1-"), which are not its own.
func IsCheckpoint(name, kind string, gen int) bool {
	rest, ok := strings.CutPrefix(name, CheckpointKind(kind, gen))
	return ok && strings.HasSuffix(rest, ".jsonl") && (gen > 0 || !strings.HasPrefix(rest, "g"))
}

// Generation is the axis's checkpoint generation: that of the run's last
// model change (ModelChangeKey) that started the axis over, else 0.
func (f *Folder) Generation(axis string) (int, error) {
	names, err := f.Glob(ModelChangeName + "*.json")
	if err != nil {
		return 0, err
	}
	gen := 0
	for _, name := range names {
		data, err := f.ReadFile(name)
		if err != nil {
			return 0, err
		}
		var c ModelChange
		if err := DecodeJSON(f.Path(name), data, &c); err != nil {
			return 0, err
		}
		if slices.Contains(c.StartedOver, axis) {
			gen = c.N
		}
	}
	return gen, nil
}

// eachPredictionIn is EachPrediction over the files names.
func (f *Folder) eachPredictionIn(names []string, fn func(itemID string, raw json.RawMessage) error) error {
	for _, name := range names {
		r, err := f.open(name)
		if err != nil {
			return err
		}
		p := f.Path(name)
		err = ScanJSONL(r, p, func(line int, raw json.RawMessage) error {
			var id struct {
				ItemID string `json:"item_id"`
			}
			if json.Unmarshal(raw, &id) != nil || id.ItemID == "" {
				return fmt.Errorf("%s:%d: field item_id is missing or not a string", p, line)
			}
			return fn(id.ItemID, raw)
		})
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Predictions reads an axis's checkpointed predictions by item id.
func (f *Folder) Predictions(axis string) (map[string]scorers.Prediction, error) {
	out := map[string]scorers.Prediction{}
	err := f.EachPrediction(axis, collectPrediction(out))
	return out, err
}

// Checkpoint kinds of a shard: the model's answers and the judged answers.
const (
	Answers = "pred-"
	Rated   = "rated-"
)

// CheckpointKind is the file-name prefix of a shard's checkpoints of a kind
// in an axis's generation: the kind itself in generation 0, else
// "<kind>g<n>-", so an axis started over on a new model (--allow-new-model)
// reads none of the earlier model's answers or ratings. A reader of all
// of them (EachPrediction) sorts a later generation's after the first's.
func CheckpointKind(kind string, gen int) string {
	if gen == 0 {
		return kind
	}
	return fmt.Sprintf("%sg%d-", kind, gen)
}

// ShardCheckpoints reads the checkpoint files of one shard of an axis of
// the kind given (Answers or Rated), by item id (a later file's wins), and
// says how many files there were: the next part number.
func (f *Folder) ShardCheckpoints(axis string, shard int, kind string) (map[string]scorers.Prediction, int, error) {
	names, err := f.Glob(shardName(axis, shard) + kind + "*")
	if err != nil {
		return nil, 0, err
	}
	out := map[string]scorers.Prediction{}
	if err := f.eachPredictionIn(names, collectPrediction(out)); err != nil {
		return nil, 0, err
	}
	return out, len(names), nil
}

// collectPrediction decodes each prediction into out by item id.
func collectPrediction(out map[string]scorers.Prediction) func(id string, raw json.RawMessage) error {
	return func(id string, raw json.RawMessage) error {
		var p scorers.Prediction
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("prediction of %s: %w", id, err)
		}
		out[id] = p
		return nil
	}
}

// FindRuns returns the run folders at or under dir, in path order: every
// folder holding a result.json. Shard folders are not searched.
func FindRuns(dir string) ([]string, error) {
	var runs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "shards" {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == ResultName {
			runs = append(runs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: no %s at or under this directory", dir, ResultName)
	}
	return runs, nil
}
