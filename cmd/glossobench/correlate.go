package main

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func init() {
	register("correlate", "rank-correlate our scores with an external benchmark on the same models (exit 2 if divergent)", runCorrelate)
}

// Exit codes of correlate. Divergence is the CI gate (spec §10), so errors
// use 1 and never 2.
const (
	correlateExitOK        = 0 // also "moderate"
	correlateExitError     = 1
	correlateExitDivergent = 2
	correlateExitOverlap   = 3 // --overlap-free refused: the instruments share items
)

func runCorrelate(args []string) int { return correlateMain(args, os.Stdout, os.Stderr) }

const scoresFormatHelp = `Score files are JSON, in one of three shapes:
  {"instrument": "seahelm", "item_hashes": ["<sha256 hex>", ...],
   "scores": [{"model_id": "m1", "score": 0.71, "item_ids": ["ds/1", ...]}, ...]}
  [{"model_id": "m1", "score": 0.71}, ...]
  {"m1": 0.71, "m2": 0.64}
item_hashes are lower-case SHA-256 hex digests of item ids; item_ids are hashed
the same way. Both may sit at the top level (the instrument's scored items)
or on a score (that model's scored items); --overlap-free reads their union.`

func correlateMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("correlate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	oursPath := fs.String("ours", "", "our scores: a JSON `FILE`, or a directory of runs (result.json ms_public, scores.jsonl item ids)")
	extPath := fs.String("external", "", "the external instrument's scores on the same models: a JSON `FILE` (or a directory of runs)")
	overlapFree := fs.Bool("overlap-free", false, "refuse unless the two instruments share no scored item (checked by item-id hashes)")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench correlate --ours OURS.json --external EXTERNAL.json [--overlap-free] [--out FILE]")
		fmt.Fprintln(stderr, "\nAligns on model_id; prints Spearman ρ, Kendall τ-b and a per-model rank-delta table.")
		fmt.Fprintln(stderr, "converged (ρ ≥ 0.7) exits 0, moderate (0.5 ≤ ρ < 0.7) exits 0, divergent (ρ < 0.5) exits 2;")
		fmt.Fprintln(stderr, "--overlap-free refusing exits 3; bad input exits 1.")
		fmt.Fprintln(stderr, "\n"+scoresFormatHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return correlateExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "glossobench correlate: unexpected argument %q\n", fs.Arg(0))
		return correlateExitError
	}
	if *oursPath == "" || *extPath == "" {
		fmt.Fprintln(stderr, "glossobench correlate: --ours and --external are required")
		return correlateExitError
	}
	ours, err := readInstrumentFile(*oursPath)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench correlate: %v\n", err)
		return correlateExitError
	}
	ext, err := readInstrumentFile(*extPath)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench correlate: %v\n", err)
		return correlateExitError
	}
	if *overlapFree {
		shared, err := sharedItems(ours, ext)
		if err != nil {
			fmt.Fprintf(stderr, "glossobench correlate: --overlap-free: %v\n", err)
			return correlateExitOverlap
		}
		if len(shared) > 0 {
			fmt.Fprintf(stderr, "glossobench correlate: --overlap-free: refused: %s and %s share %d scored item(s):\n",
				ours.name(), ext.name(), len(shared))
			for _, h := range shared {
				fmt.Fprintf(stderr, "  %s\n", h)
			}
			return correlateExitOverlap
		}
		fmt.Fprintf(stdout, "overlap-free: %s (%d items) and %s (%d items) share no scored item\n",
			ours.name(), len(ours.allHashes), ext.name(), len(ext.allHashes))
	}
	rep, err := compareRankings(ours.scores, ext.scores)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench correlate: %v\n", err)
		return correlateExitError
	}
	rep.Name = ext.name()
	code := correlateExitOK
	switch {
	case rep.Spearman >= rhoConverged:
		rep.Verdict = "converged"
	case rep.Spearman >= rhoDivergent:
		rep.Verdict = "moderate"
	default:
		rep.Verdict = "divergent"
		code = correlateExitDivergent
	}
	fmt.Fprintf(stdout, "%s vs %s: %d shared models\n", ours.name(), ext.name(), rep.N)
	rep.print(stdout)
	fmt.Fprintf(stdout, "verdict: %s\n", rep.Verdict)
	if rep.Note != "" {
		fmt.Fprintf(stdout, "note: %s\n", rep.Note)
	}
	if *out != "" {
		if err := writeReportJSON(*out, rep); err != nil {
			fmt.Fprintf(stderr, "glossobench correlate: %v\n", err)
			return correlateExitError
		}
	}
	return code
}

// instrument is one score file: model scores and the item hashes it scored.
type instrument struct {
	Instrument string
	path       string
	scores     map[string]modelScore
	allHashes  map[string]string // union of top-level and per-model item hashes → the raw id when known
	hasItems   bool
}

func (in *instrument) name() string {
	if in.Instrument != "" {
		return in.Instrument
	}
	return in.path
}

// sharedItems returns the item hashes both instruments scored, sorted. It
// fails when either file lists no items, since then disjointness cannot be
// certified.
func sharedItems(a, b *instrument) ([]string, error) {
	for _, in := range []*instrument{a, b} {
		if !in.hasItems {
			return nil, fmt.Errorf("%s lists no item_hashes or item_ids; cannot certify that the instruments share no item", in.path)
		}
	}
	var shared []string
	for h := range a.allHashes {
		if _, ok := b.allHashes[h]; ok {
			if id := cmp.Or(a.allHashes[h], b.allHashes[h]); id != "" {
				h += " (" + id + ")"
			}
			shared = append(shared, h)
		}
	}
	slices.Sort(shared)
	return shared, nil
}

// hashItemID is the item-id hash: lower-case hex SHA-256 of the id.
func hashItemID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// readInstrumentFile reads a score file, or a directory of runs: each run's
// result.json gives model_id → ms_public and its <axis>/scores.jsonl files
// give the scored item ids.
func readInstrumentFile(path string) (*instrument, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return readRunsInstrument(path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return readInstrument(path, b)
}

func readRunsInstrument(dir string) (*instrument, error) {
	runs, err := findRunResults(dir)
	if err != nil {
		return nil, err
	}
	scores, err := runMSScores(runs)
	if err != nil {
		return nil, err
	}
	in := &instrument{Instrument: "glossobench", path: dir, scores: scores, allHashes: map[string]string{}}
	for _, r := range runs {
		for axis := range r.Axes {
			items, err := readRunAxisScores(filepath.Join(r.dir, axis, "scores.jsonl"))
			if errors.Is(err, fs.ErrNotExist) {
				continue // an axis that scored nothing
			}
			if err != nil {
				return nil, err
			}
			ids := make([]string, 0, len(items))
			for id := range items {
				ids = append(ids, id)
			}
			in.addItems(ids, true)
		}
	}
	return in, nil
}

// scoreEntry is one element of "scores" (or of a top-level list).
type scoreEntry struct {
	ModelID    string   `json:"model_id"`
	Score      *float64 `json:"score"`
	ItemHashes []string `json:"item_hashes"`
	ItemIDs    []string `json:"item_ids"`
}

// readInstrument parses the three accepted shapes (see scoresFormatHelp).
// Errors name the file, the line and the field.
func readInstrument(path string, data []byte) (*instrument, error) {
	in := &instrument{path: path, scores: map[string]modelScore{}, allHashes: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonSyntaxError(path, data, dec, err)
	}
	switch tok {
	case json.Delim('['):
		if err := in.readEntries(dec, data, "scores"); err != nil {
			return nil, err
		}
	case json.Delim('{'):
		isMap := false
		sawScores := false
		for dec.More() {
			keyOff := jsonSkipSep(data, dec.InputOffset())
			k, err := dec.Token()
			if err != nil {
				return nil, jsonSyntaxError(path, data, dec, err)
			}
			key := k.(string)
			switch {
			case key == "scores" && !isMap:
				sawScores = true
				if t, err := dec.Token(); err != nil {
					return nil, jsonSyntaxError(path, data, dec, err)
				} else if t != json.Delim('[') {
					return nil, fmt.Errorf("%s:%d: field scores: want a list", path, jsonLineAt(data, keyOff))
				}
				if err := in.readEntries(dec, data, "scores"); err != nil {
					return nil, err
				}
			case (key == "instrument" || key == "item_hashes" || key == "item_ids") && !isMap:
				var v any
				if key == "instrument" {
					v = &in.Instrument
				} else {
					v = new([]string)
				}
				if err := dec.Decode(v); err != nil {
					return nil, fmt.Errorf("%s:%d: field %s: %v", path, jsonLineAt(data, keyOff), key, errors.Unwrap(err))
				}
				if key != "instrument" {
					in.addItems(*(v.(*[]string)), key == "item_ids")
				}
			default:
				// The {"model_id": score} shape: every value is a number.
				if sawScores || in.Instrument != "" || in.hasItems {
					return nil, fmt.Errorf("%s:%d: unknown field %q", path, jsonLineAt(data, keyOff), key)
				}
				isMap = true
				line := jsonLineAt(data, keyOff)
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return nil, jsonSyntaxError(path, data, dec, err)
				}
				v, err := strconv.ParseFloat(string(raw), 64)
				if err != nil || math.IsInf(v, 0) {
					return nil, fmt.Errorf("%s:%d: field %q: score %s is not a finite number", path, line, key, raw)
				}
				if err := in.add(key, v, line); err != nil {
					return nil, err
				}
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, jsonSyntaxError(path, data, dec, err)
		}
		if !isMap && !sawScores {
			return nil, fmt.Errorf("%s: no field \"scores\"", path)
		}
	default:
		return nil, fmt.Errorf("%s:1: want a JSON object or list of scores", path)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s:%d: unexpected data after the scores", path, jsonLineAt(data, dec.InputOffset()))
	}
	if len(in.scores) == 0 {
		return nil, fmt.Errorf("%s: no scores", path)
	}
	return in, nil
}

// readEntries reads list elements up to and including the closing bracket.
func (in *instrument) readEntries(dec *json.Decoder, data []byte, field string) error {
	for i := 0; dec.More(); i++ {
		// InputOffset sits before the separating comma and whitespace; name
		// the line where the element starts.
		line := jsonLineAt(data, jsonSkipSep(data, dec.InputOffset()))
		var e scoreEntry
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return jsonSyntaxError(in.path, data, dec, err)
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		d.UseNumber()
		if err := d.Decode(&e); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return fmt.Errorf("%s:%d: %s[%d].%s: want %s, got %s", in.path, line+jsonLineAt(raw, te.Offset)-1, field, i, te.Field, te.Type, te.Value)
			}
			return fmt.Errorf("%s:%d: %s[%d]: %v", in.path, line, field, i, strings.TrimPrefix(err.Error(), "json: "))
		}
		if e.ModelID == "" {
			return fmt.Errorf("%s:%d: %s[%d]: field model_id is missing or empty", in.path, line, field, i)
		}
		if e.Score == nil {
			return fmt.Errorf("%s:%d: %s[%d] (%s): field score is missing or null", in.path, line, field, i, e.ModelID)
		}
		if err := in.add(e.ModelID, *e.Score, line); err != nil {
			return err
		}
		in.addItems(e.ItemHashes, false)
		in.addItems(e.ItemIDs, true)
	}
	_, err := dec.Token() // ']'
	if err != nil {
		return jsonSyntaxError(in.path, data, dec, err)
	}
	return nil
}

func (in *instrument) add(id string, v float64, line int) error {
	if prev, dup := in.scores[id]; dup {
		return fmt.Errorf("%s:%d: model_id %q already given on line %d", in.path, line, id, prev.Line)
	}
	in.scores[id] = modelScore{Score: v, Line: line}
	return nil
}

func (in *instrument) addItems(items []string, rawIDs bool) {
	if items != nil {
		in.hasItems = true
	}
	for _, it := range items {
		if rawIDs {
			in.allHashes[hashItemID(it)] = it
		} else if h := strings.ToLower(it); in.allHashes[h] == "" {
			in.allHashes[h] = ""
		}
	}
}

// jsonSkipSep skips a comma and whitespace from offset.
func jsonSkipSep(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.ContainsRune(", \t\r\n", rune(data[off])) {
		off++
	}
	return off
}

// jsonLineAt is the 1-based line of a byte offset.
func jsonLineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}

func jsonSyntaxError(path string, data []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%s:%d: invalid JSON: %v", path, jsonLineAt(data, se.Offset), se)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s:%d: unexpected end of JSON", path, jsonLineAt(data, int64(len(data))))
	}
	return fmt.Errorf("%s:%d: %v", path, jsonLineAt(data, dec.InputOffset()), err)
}
