package viewer

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/backends"
)

// A scan of a large axis (every page, and the sorts) reads a few fields of
// every scores.jsonl and checkpoint line; encoding/json validates and walks
// the whole line for them. topFields walks only the top level and hands
// over the raw values, so the fields the scan does not ask for (audit rows,
// generations, log-likelihoods) are skipped at the speed of a byte loop.

// topFields calls fn with each top-level key of the JSON object b and its
// raw value. It reports false when b is not an object it can walk simply
// (an escaped key, a malformed or truncated line) or fn declines a value;
// the caller then decodes the line with encoding/json, which names the
// fault. Numbers and literals are checked; a string, or the inside of an
// object or array, that fn does not read is only delimited, not validated:
// the lines a page shows are decoded whole afterwards.
func topFields(b []byte, fn func(key string, val []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		end, ok := skipString(b, i)
		key := b[i+1 : end-1]
		if !ok || bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vend, ok := skipValue(b, i)
		if !ok || !fn(string(key), b[i:vend]) {
			return false
		}
		i = skipSpace(b, vend)
		switch {
		case i >= len(b):
			return false
		case b[i] == '}':
			return skipSpace(b, i+1) == len(b)
		case b[i] != ',':
			return false
		}
		i = skipSpace(b, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the string that opens at b[i].
func skipString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(b), false
}

// skipValue returns the index after the value that starts at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	if b[i] == '"' {
		return skipString(b, i)
	}
	if b[i] != '{' && b[i] != '[' { // a number, true, false or null
		j := i
		for j < len(b) && bytes.IndexByte([]byte(",}] \t\r\n"), b[j]) < 0 {
			j++
		}
		return j, j > i && json.Valid(b[i:j])
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end, ok := skipString(b, j)
			if !ok {
				return end, false
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1, true
			}
		}
	}
	return len(b), false
}

// plainString is the text of a JSON string value without escapes.
func plainString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 {
		return "", false
	}
	return string(val[1 : len(val)-1]), true
}

// decodeScoreLine reads the scoreLine fields of a scores.jsonl record as
// json.Unmarshal would, without walking the rest of it.
func decodeScoreLine(b []byte, s *scoreLine) error {
	*s = scoreLine{}
	fast := topFields(b, func(key string, val []byte) bool {
		var ok bool
		var err error
		switch key {
		case "item_id":
			s.ItemID, ok = plainString(val)
		case "source":
			s.Source, ok = plainString(val)
		case "flagged":
			s.Flagged, ok = plainString(val)
		case "score":
			s.Score, err = strconv.ParseFloat(string(val), 64)
			ok = err == nil
		case "fields":
			ok = topFields(val, func(key string, val []byte) bool {
				if key == "parse_fail" {
					s.Fields.ParseFail = string(val) == "true"
					return string(val) == "true" || string(val) == "false"
				}
				return !caseFold(key, "parse_fail")
			})
		default:
			ok = !caseFold(key, "item_id", "source", "flagged", "score", "fields")
		}
		return ok
	})
	if fast {
		return nil
	}
	*s = scoreLine{}
	return json.Unmarshal(b, s)
}

// usageLine is the part of a checkpoint record (scorers.Prediction) the
// tokens and latency sorts read.
type usageLine struct {
	ItemID string          `json:"item_id"`
	Usage  *backends.Usage `json:"usage"`
}

// decodeUsageLine reads the usageLine fields of a checkpoint record as
// json.Unmarshal would, without walking its generations and
// log-likelihoods.
func decodeUsageLine(b []byte, p *usageLine) error {
	*p = usageLine{}
	fast := topFields(b, func(key string, val []byte) bool {
		switch key {
		case "item_id":
			var ok bool
			p.ItemID, ok = plainString(val)
			return ok
		case "usage":
			return json.Unmarshal(val, &p.Usage) == nil
		}
		return !caseFold(key, "item_id", "usage")
	})
	if fast {
		return nil
	}
	*p = usageLine{}
	return json.Unmarshal(b, p)
}

// caseFold reports whether key is one of names under a case-insensitive
// comparison, as encoding/json matches a key to a field.
func caseFold(key string, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return true
		}
	}
	return false
}
