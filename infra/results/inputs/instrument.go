package inputs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Instrument is one instrument's score file: model scores and the items it
// scored.
type Instrument struct {
	Name   string                // the file's "instrument" field; "" when it has none
	Path   string                // where it was read, for messages
	Scores map[string]ModelScore // model_id → score
	// Items holds the hash (HashItemID) of every scored item the file
	// lists, top-level and per model, mapped to the raw item id when the
	// file gave the id and to "" when it gave only the hash.
	Items map[string]string
	// ListsItems reports whether the file has any item_hashes or item_ids
	// field, even an empty one.
	ListsItems bool
}

// Title names the instrument in messages: its "instrument" field, else its
// path.
func (in *Instrument) Title() string {
	if in.Name != "" {
		return in.Name
	}
	return in.Path
}

// AddItemIDs records scored items by raw id. A nil slice records nothing;
// an empty one still marks the instrument as listing its items.
func (in *Instrument) AddItemIDs(ids []string) { in.addItems(ids, true) }

// HashItemID is the item-id hash: lower-case hex SHA-256 of the id.
func HashItemID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// ReadInstrumentFile reads the score file at path (see ReadInstrument).
func ReadInstrumentFile(path string) (*Instrument, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ReadInstrument(path, b)
}

// scoreEntry is one element of "scores" (or of a top-level list).
type scoreEntry struct {
	ModelID    string   `json:"model_id"`
	Score      *float64 `json:"score"`
	ItemHashes []string `json:"item_hashes"`
	ItemIDs    []string `json:"item_ids"`
}

// ReadInstrument parses a JSON score file in one of three shapes:
//
//	{"instrument": "seahelm", "item_hashes": ["<sha256 hex>", ...],
//	 "scores": [{"model_id": "m1", "score": 0.71, "item_ids": ["ds/1", ...]}, ...]}
//	[{"model_id": "m1", "score": 0.71}, ...]
//	{"m1": 0.71, "m2": 0.64}
//
// item_hashes are SHA-256 hex digests of item ids (any case); item_ids are
// hashed with HashItemID. Both may sit at the top level or on a score.
// Errors name the file, the line and the field; path is the file's name in
// them.
func ReadInstrument(path string, data []byte) (*Instrument, error) {
	in := &Instrument{Path: path, Scores: map[string]ModelScore{}, Items: map[string]string{}}
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
					return nil, fmt.Errorf("%s:%d: field scores: want a list", path, LineAt(data, keyOff))
				}
				if err := in.readEntries(dec, data, "scores"); err != nil {
					return nil, err
				}
			case (key == "instrument" || key == "item_hashes" || key == "item_ids") && !isMap:
				var v any
				if key == "instrument" {
					v = &in.Name
				} else {
					v = new([]string)
				}
				if err := dec.Decode(v); err != nil {
					return nil, fmt.Errorf("%s:%d: field %s: %v", path, LineAt(data, keyOff), key, errors.Unwrap(err))
				}
				if key != "instrument" {
					in.addItems(*(v.(*[]string)), key == "item_ids")
				}
			default:
				// The {"model_id": score} shape: every value is a number.
				if sawScores || in.Name != "" || in.ListsItems {
					return nil, fmt.Errorf("%s:%d: unknown field %q", path, LineAt(data, keyOff), key)
				}
				isMap = true
				line := LineAt(data, keyOff)
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
		return nil, fmt.Errorf("%s:%d: unexpected data after the scores", path, LineAt(data, dec.InputOffset()))
	}
	if len(in.Scores) == 0 {
		return nil, fmt.Errorf("%s: no scores", path)
	}
	return in, nil
}

// readEntries reads list elements up to and including the closing bracket.
func (in *Instrument) readEntries(dec *json.Decoder, data []byte, field string) error {
	for i := 0; dec.More(); i++ {
		// InputOffset sits before the separating comma and whitespace; name
		// the line where the element starts.
		line := LineAt(data, jsonSkipSep(data, dec.InputOffset()))
		var e scoreEntry
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return jsonSyntaxError(in.Path, data, dec, err)
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		d.UseNumber()
		if err := d.Decode(&e); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return fmt.Errorf("%s:%d: %s[%d].%s: want %s, got %s", in.Path, line+LineAt(raw, te.Offset)-1, field, i, te.Field, te.Type, te.Value)
			}
			return fmt.Errorf("%s:%d: %s[%d]: %v", in.Path, line, field, i, strings.TrimPrefix(err.Error(), "json: "))
		}
		if e.ModelID == "" {
			return fmt.Errorf("%s:%d: %s[%d]: field model_id is missing or empty", in.Path, line, field, i)
		}
		if e.Score == nil {
			return fmt.Errorf("%s:%d: %s[%d] (%s): field score is missing or null", in.Path, line, field, i, e.ModelID)
		}
		if err := in.add(e.ModelID, *e.Score, line); err != nil {
			return err
		}
		in.addItems(e.ItemHashes, false)
		in.addItems(e.ItemIDs, true)
	}
	_, err := dec.Token() // ']'
	if err != nil {
		return jsonSyntaxError(in.Path, data, dec, err)
	}
	return nil
}

func (in *Instrument) add(id string, v float64, line int) error {
	if prev, dup := in.Scores[id]; dup {
		return fmt.Errorf("%s:%d: model_id %q already given on line %d", in.Path, line, id, prev.Line)
	}
	in.Scores[id] = ModelScore{Score: v, Line: line}
	return nil
}

func (in *Instrument) addItems(items []string, rawIDs bool) {
	if items != nil {
		in.ListsItems = true
	}
	if in.Items == nil {
		in.Items = map[string]string{}
	}
	for _, it := range items {
		if rawIDs {
			in.Items[HashItemID(it)] = it
		} else if h := strings.ToLower(it); in.Items[h] == "" {
			in.Items[h] = ""
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

// LineAt is the 1-based line of a byte offset into data, such as the
// Offset of a json.SyntaxError; an offset outside data is clamped to it.
func LineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}

// readJSON reads the JSON file at path into v. A syntax error names the
// file and line; another decoding error names the file after expect, what
// the reader wanted the file to be ("" when the error says enough).
func readJSON(path string, v any, expect string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s:%d: invalid JSON: %v", path, LineAt(b, se.Offset), se)
		}
		return fmt.Errorf("%s: %s%v", path, expect, err)
	}
	return nil
}

func jsonSyntaxError(path string, data []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%s:%d: invalid JSON: %v", path, LineAt(data, se.Offset), se)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s:%d: unexpected end of JSON", path, LineAt(data, int64(len(data))))
	}
	return fmt.Errorf("%s:%d: %v", path, LineAt(data, dec.InputOffset()), err)
}
