// Package leaderboard keeps the append-only leaderboards of spec §5:
// leaderboard/<lang>/v<MAJOR>/leaderboard.jsonl, one row per scored model,
// on any store.Store (local disk or S3).
//
// Object stores cannot append to an object, so each row is two create-only
// objects:
//
//	leaderboard/<lang>/v<MAJOR>/by-hash/<sha256>.json        the row, named after the SHA-256 of its bytes
//	leaderboard/<lang>/v<MAJOR>/rows/<seq 000000>-<sha8>.json the row's slot: {"row_sha256": "<sha256>"}
//
// The sha8 of a slot is the first 8 hex digits of the SHA-256 of the
// previous row (of a fixed genesis string for row 0). Rows are immutable, so
// every writer aiming at sequence number N computes the same slot key: the
// store's create-only Put then lets exactly one of them take slot N, and the
// losers re-read and retry at N+1 (a loser's row object stays behind,
// unreferenced). Slots are therefore dense and a line, once visible, never
// moves or changes — the materialised file only ever grows at its end.
//
// Read verifies every row, the newest included: a row object whose bytes do
// not hash to its name was edited, and Append refuses to chain onto it. The
// slot chain also catches a row removed, replaced or inserted by hand.
//
// leaderboard.jsonl is derived from the rows: Export writes it anywhere and
// Publish rewrites it in the store after an append. Each of its lines is a
// row object's bytes, so the SHA-256 of line i names row i's object.
//
// Leaderboards written before rows were named by hash hold the row itself in
// the slot object. They read as before; such a row is verified by the next
// slot's chain hash, so only a legacy newest row is unverifiable until the
// next append (which writes the new form) chains onto it.
package leaderboard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/glossobench/glossobench/infra/store"
)

// ErrDuplicate reports an append of a (model_id, pins) pair already on the
// leaderboard.
var ErrDuplicate = errors.New("leaderboard: duplicate (model_id, pins)")

// ErrAltered reports rows changed outside Append: one edited, removed,
// inserted or out of order. Retrying does not mend it.
var ErrAltered = errors.New("leaderboard: rows altered outside Append")

// Row is one leaderboard line.
type Row struct {
	// Seq is the row's 0-based position; Append assigns it.
	Seq     int    `json:"seq"`
	ModelID string `json:"model_id"`
	// Pins identify what was measured (model revision, bench_version,
	// dataset hashes, ...). (ModelID, Pins) is the row's identity: a second
	// row with the same identity is refused.
	Pins          map[string]string  `json:"pins"`
	ModelMeta     ModelMeta          `json:"model_meta"`
	ReasoningMode string             `json:"reasoning_mode"`
	Scores        map[string]float64 `json:"scores"` // per axis
	MS            float64            `json:"ms"`
	// RankingWeights are axis → weight of the axes the run ranks on (public
	// and not near chance, spec §4); views rank rows on the axes every
	// compared row ranks on (stats.CommonRanking). Absent in older rows.
	RankingWeights map[string]float64 `json:"ranking_weights,omitempty"`
	MSCI95         []float64          `json:"ms_ci95,omitempty"` // [low, high]
	BenchVersion   string             `json:"bench_version,omitempty"`
	ResultRef      string             `json:"result_ref,omitempty"` // where result.json lives
	// RunStore (a store URI) and RunID name the run, so views that need its
	// items (Elo) read them from the store the run was written to, which
	// need not be the leaderboard's.
	RunStore string   `json:"run_store,omitempty"`
	RunID    string   `json:"run_id,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// AppendedAt is set by Append when zero.
	AppendedAt time.Time `json:"appended_at"`
}

// ModelMeta describes the model so views can compare within a class (spec
// §10: a base-vs-instruct cloze artifact is a within-group comparison).
type ModelMeta struct {
	Family     string `json:"family"`
	ModelClass string `json:"model_class"` // e.g. base, instruct, reasoning
	Params     string `json:"params"`      // e.g. "7B"
}

// Dir returns the leaderboard's directory key, leaderboard/<lang>/v<major>.
func Dir(lang string, major int) string {
	return fmt.Sprintf("leaderboard/%s/v%d", lang, major)
}

// JSONLPath returns the conventional name of the materialised leaderboard,
// leaderboard/<lang>/v<major>/leaderboard.jsonl, for Export's callers.
func JSONLPath(lang string, major int) string {
	return Dir(lang, major) + "/leaderboard.jsonl"
}

func rowsPrefix(lang string, major int) string { return Dir(lang, major) + "/rows/" }

// objectKey is the key of the row whose bytes hash to sum.
func objectKey(lang string, major int, sum [sha256.Size]byte) string {
	return Dir(lang, major) + "/by-hash/" + hex.EncodeToString(sum[:]) + ".json"
}

// slot is the content of a row's slot object.
type slot struct {
	RowSHA256 string `json:"row_sha256"`
}

func rowKey(lang string, major, seq int, prev [sha256.Size]byte) string {
	return fmt.Sprintf("%s%06d-%s.json", rowsPrefix(lang, major), seq, hex.EncodeToString(prev[:4]))
}

// genesis is the "previous row" hash of row 0, distinct per leaderboard.
func genesis(lang string, major int) [sha256.Size]byte {
	return sha256.Sum256([]byte("glossobench leaderboard " + Dir(lang, major)))
}

func checkBoard(lang string, major int) error {
	if lang == "" || len(lang) > 32 {
		return fmt.Errorf("leaderboard: language %q must be 1 to 32 characters", lang)
	}
	for _, r := range lang {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("leaderboard: language %q may hold only letters, digits, '-' and '_'", lang)
		}
	}
	if major < 1 {
		return fmt.Errorf("leaderboard: major version %d must be at least 1", major)
	}
	return nil
}

// Validate reports the first problem that would make r an unusable row.
func (r *Row) Validate() error {
	if strings.TrimSpace(r.ModelID) == "" {
		return errors.New("leaderboard: row: model_id is empty")
	}
	for k := range r.Pins {
		if k == "" {
			return fmt.Errorf("leaderboard: row %s: pins has an empty key", r.ModelID)
		}
	}
	for axis, v := range r.Scores {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("leaderboard: row %s: scores.%s is %v; skip an axis without a score instead", r.ModelID, axis, v)
		}
	}
	if math.IsNaN(r.MS) || math.IsInf(r.MS, 0) {
		return fmt.Errorf("leaderboard: row %s: ms is %v", r.ModelID, r.MS)
	}
	if r.MSCI95 != nil {
		if len(r.MSCI95) != 2 || math.IsNaN(r.MSCI95[0]) || math.IsNaN(r.MSCI95[1]) || math.IsInf(r.MSCI95[0], 0) || math.IsInf(r.MSCI95[1], 0) || r.MSCI95[0] > r.MSCI95[1] {
			return fmt.Errorf("leaderboard: row %s: ms_ci95 %v is not a finite [low, high] pair", r.ModelID, r.MSCI95)
		}
	}
	return nil
}

// sameIdentity reports whether a and b have the same (model_id, pins); a nil
// and an empty pin map are the same.
func sameIdentity(a, b *Row) bool {
	return a.ModelID == b.ModelID && maps.Equal(a.Pins, b.Pins)
}

// board is the verified state of a leaderboard's rows.
type board struct {
	rows []Row
	raw  [][]byte          // each row's bytes: its object, a line of leaderboard.jsonl
	last [sha256.Size]byte // hash of the last row, or the genesis
	keys map[string]bool   // slot keys already read
}

// load brings b up to date with the store, reading only rows it has not
// read before, and verifies every row and the hash chain.
func (b *board) load(ctx context.Context, st store.Store, lang string, major int) error {
	prefix := rowsPrefix(lang, major)
	keys, err := st.List(ctx, prefix)
	if err != nil {
		return fmt.Errorf("leaderboard %s: %w", Dir(lang, major), err)
	}
	type slotKey struct {
		seq int
		key string
	}
	var fresh []slotKey
	for _, k := range keys {
		if b.keys[k] {
			continue
		}
		seq, err := parseRowName(strings.TrimPrefix(k, prefix))
		if err != nil {
			return fmt.Errorf("leaderboard %s: object %s: %w", Dir(lang, major), k, err)
		}
		fresh = append(fresh, slotKey{seq, k})
	}
	// Sort numerically: past row 999999 the names grow a digit.
	slices.SortFunc(fresh, func(x, y slotKey) int { return x.seq - y.seq })
	for _, s := range fresh {
		if s.seq != len(b.rows) {
			return fmt.Errorf("leaderboard %s: object %s has sequence number %d where %d was expected (a row is missing or duplicated): %w", Dir(lang, major), s.key, s.seq, len(b.rows), ErrAltered)
		}
		if want := rowKey(lang, major, s.seq, b.last); s.key != want {
			return fmt.Errorf("leaderboard %s: object %s does not chain to the previous row (want %s): %w", Dir(lang, major), s.key, want, ErrAltered)
		}
		data, err := readRow(ctx, st, lang, major, s.key)
		if err != nil {
			return err
		}
		var r Row
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("leaderboard %s: row %d (%s): %w", Dir(lang, major), s.seq, s.key, err)
		}
		if r.Seq != s.seq {
			return fmt.Errorf("leaderboard %s: object %s holds seq %d: %w", Dir(lang, major), s.key, r.Seq, ErrAltered)
		}
		if err := r.Validate(); err != nil {
			return fmt.Errorf("leaderboard %s: object %s: %w", Dir(lang, major), s.key, err)
		}
		b.rows = append(b.rows, r)
		b.raw = append(b.raw, data)
		b.last = sha256.Sum256(data)
		b.keys[s.key] = true
	}
	return nil
}

// readRow returns the bytes of the row in slot key, checked against the hash
// its object is named after; a legacy slot holds the row itself.
func readRow(ctx context.Context, st store.Store, lang string, major int, key string) ([]byte, error) {
	data, err := st.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("leaderboard %s: %w", Dir(lang, major), err)
	}
	var sl slot
	if json.Unmarshal(data, &sl) != nil || sl.RowSHA256 == "" {
		return data, nil // legacy: the slot is the row
	}
	want, err := hex.DecodeString(sl.RowSHA256)
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("leaderboard %s: object %s: row_sha256 %q is not a SHA-256: %w", Dir(lang, major), key, sl.RowSHA256, ErrAltered)
	}
	var sum [sha256.Size]byte
	copy(sum[:], want)
	okey := objectKey(lang, major, sum)
	row, err := st.Get(ctx, okey)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("leaderboard %s: object %s names row %s, which is not there: %w", Dir(lang, major), key, okey, ErrAltered)
	}
	if err != nil {
		return nil, fmt.Errorf("leaderboard %s: %w", Dir(lang, major), err)
	}
	if sha256.Sum256(row) != sum {
		return nil, fmt.Errorf("leaderboard %s: row object %s does not hash to its name, so it was edited: %w", Dir(lang, major), okey, ErrAltered)
	}
	return row, nil
}

// parseRowName parses "<seq>-<sha8>.json" and returns seq.
func parseRowName(name string) (int, error) {
	base, ok := strings.CutSuffix(name, ".json")
	num, sha, ok2 := strings.Cut(base, "-")
	if !ok || !ok2 || len(num) < 6 || len(sha) != 8 {
		return 0, errors.New("not a row (want <seq 000000>-<sha8>.json)")
	}
	if _, err := hex.DecodeString(sha); err != nil || strings.ToLower(sha) != sha {
		return 0, errors.New("not a row: the part after '-' is not 8 lowercase hex digits")
	}
	seq, err := strconv.Atoi(num)
	if err != nil || seq < 0 || num[0] == '+' || (len(num) > 6 && num[0] == '0') {
		return 0, fmt.Errorf("not a row: bad sequence number %q", num)
	}
	return seq, nil
}

func newBoard(lang string, major int) *board {
	return &board{last: genesis(lang, major), keys: map[string]bool{}}
}

// maxAppendAttempts bounds the retries of a contended append; each loss means
// another writer's row landed, so this is many concurrent appenders deep.
const maxAppendAttempts = 100

// Append adds row to the leaderboard for lang and major version. It assigns
// row.Seq and, when zero, row.AppendedAt. The row lands whole or not at all;
// existing rows are never rewritten. A row whose (model_id, pins) is already
// on the leaderboard is refused with an error wrapping ErrDuplicate.
// Concurrent appends from any number of processes are safe.
func Append(ctx context.Context, st store.Store, lang string, major int, row Row) error {
	if err := checkBoard(lang, major); err != nil {
		return err
	}
	if err := row.Validate(); err != nil {
		return err
	}
	if row.AppendedAt.IsZero() {
		row.AppendedAt = time.Now().UTC()
	}
	b := newBoard(lang, major)
	for attempt := range maxAppendAttempts {
		if err := b.load(ctx, st, lang, major); err != nil {
			return err
		}
		for i := range b.rows {
			if sameIdentity(&b.rows[i], &row) {
				return fmt.Errorf("leaderboard %s: model %s with pins %v is already row %d: %w", Dir(lang, major), row.ModelID, row.Pins, b.rows[i].Seq, ErrDuplicate)
			}
		}
		row.Seq = len(b.rows)
		data, err := json.Marshal(&row)
		if err != nil {
			return fmt.Errorf("leaderboard %s: row %s: %w", Dir(lang, major), row.ModelID, err)
		}
		// The row first, under its hash (a retry finds the same bytes
		// there), then the slot that puts it in order.
		sum := sha256.Sum256(data)
		if err := st.Put(ctx, objectKey(lang, major, sum), data); err != nil && !errors.Is(err, store.ErrExists) {
			return fmt.Errorf("leaderboard %s: %w", Dir(lang, major), err)
		}
		sl, _ := json.Marshal(slot{RowSHA256: hex.EncodeToString(sum[:])})
		err = st.Put(ctx, rowKey(lang, major, row.Seq, b.last), sl)
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrExists) {
			return fmt.Errorf("leaderboard %s: %w", Dir(lang, major), err)
		}
		// Another writer took this slot: back off a little (jittered, so
		// a crowd spreads out) and retry at the next one.
		d := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 6)))
		select {
		case <-ctx.Done():
			return fmt.Errorf("leaderboard %s: append %s: %w", Dir(lang, major), row.ModelID, ctx.Err())
		case <-time.After(d):
		}
	}
	return fmt.Errorf("leaderboard %s: append %s: gave up after %d attempts lost to concurrent appends", Dir(lang, major), row.ModelID, maxAppendAttempts)
}

// Read returns the leaderboard's rows in append order, after checking that
// they form an unbroken chain. A leaderboard never appended to has no rows.
func Read(ctx context.Context, st store.Store, lang string, major int) ([]Row, error) {
	if err := checkBoard(lang, major); err != nil {
		return nil, err
	}
	b := newBoard(lang, major)
	if err := b.load(ctx, st, lang, major); err != nil {
		return nil, err
	}
	return b.rows, nil
}

// Export writes the materialised leaderboard.jsonl: each row's bytes, one
// per line, in append order, after verifying every row. Since rows are only
// ever added at the end, an older export is always a prefix of a newer one,
// and the SHA-256 of line i (without its newline) names row i's object.
func Export(ctx context.Context, st store.Store, lang string, major int, w io.Writer) error {
	if err := checkBoard(lang, major); err != nil {
		return err
	}
	b := newBoard(lang, major)
	if err := b.load(ctx, st, lang, major); err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, line := range b.raw {
		buf.Write(line)
		buf.WriteByte('\n')
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// replacer is a store that can overwrite a derived object. Rows are never
// overwritten; only leaderboard.jsonl, which Publish derives from them.
type replacer interface {
	Replace(ctx context.Context, key string, data []byte) error
}

// Publish rewrites the store's leaderboard/<lang>/v<major>/leaderboard.jsonl
// from the rows, so a reader finds the file the methodology names. The rows
// stay the record: a publish racing an append may write a file one row
// short, which the next publish completes (it only ever grows).
func Publish(ctx context.Context, st store.Store, lang string, major int) error {
	r, ok := st.(replacer)
	if !ok {
		return fmt.Errorf("leaderboard %s: store %s cannot rewrite leaderboard.jsonl; use Export", Dir(lang, major), st.Describe())
	}
	var buf bytes.Buffer
	if err := Export(ctx, st, lang, major, &buf); err != nil {
		return err
	}
	if err := r.Replace(ctx, JSONLPath(lang, major), buf.Bytes()); err != nil {
		return fmt.Errorf("leaderboard %s: %w", Dir(lang, major), err)
	}
	return nil
}

// ByClass groups rows by model_meta.model_class (empty class as
// "unspecified"), keeping append order, so views rank within a class.
func ByClass(rows []Row) map[string][]Row {
	out := map[string][]Row{}
	for _, r := range rows {
		c := r.ModelMeta.ModelClass
		if c == "" {
			c = "unspecified"
		}
		out[c] = append(out[c], r)
	}
	return out
}

// Axes returns every axis some row scored, sorted.
func Axes(rows []Row) []string {
	scored := map[string]bool{}
	for _, r := range rows {
		for a := range r.Scores {
			scored[a] = true
		}
	}
	return slices.Sorted(maps.Keys(scored))
}
