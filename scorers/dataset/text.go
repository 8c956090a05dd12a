package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text a dataset gives an item is valid or refused: encoding/json reads
// invalid UTF-8 and a lone surrogate escape ("\ud800") as U+FFFD, and a
// NUL byte passes every reader, so without these checks a damaged row is
// scored as if it were the text its author wrote.

// checkText says what is wrong with s as item text: invalid UTF-8 or a NUL
// byte, with its byte offset; nil when s is valid.
func checkText(s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return fmt.Errorf("a NUL byte at byte %d", i)
	}
	if utf8.ValidString(s) {
		return nil
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return fmt.Errorf("invalid UTF-8 at byte %d", i)
			}
		}
	}
	return nil
}

// checkValue is checkText over every string in a value read from a row
// (a text, a list, a record).
func checkValue(v any) error {
	switch x := v.(type) {
	case string:
		return checkText(x)
	case []any:
		for i, e := range x {
			if err := checkValue(e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	case map[string]any:
		for k, e := range x {
			if err := checkValue(e); err != nil {
				return fmt.Errorf("key %s: %w", k, err)
			}
		}
	}
	return nil
}

// CheckJSON refuses a JSON text (a JSONL line, one record of a JSON array)
// that holds a string encoding/json would change: bytes that are not
// UTF-8, or an escaped half of a surrogate pair. The error names the field
// as a column path (prompts.0.text) and the byte of the text. JSON must be
// UTF-8 (RFC 8259), so this holds for columns no mapping reads too.
func CheckJSON(text []byte) error {
	if utf8.Valid(text) && !maybeSurrogate(text) {
		return nil // the common case, without tokenizing
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	type frame struct {
		obj  bool
		key  string
		idx  int
		want bool // an object expecting a key
	}
	var stack []frame
	path := func() string {
		parts := make([]string, len(stack))
		for i, f := range stack {
			if f.obj {
				parts[i] = f.key
			} else {
				parts[i] = strconv.Itoa(f.idx)
			}
		}
		return strings.Join(parts, ".")
	}
	value := func() { // a value ended: move past it in its container
		if n := len(stack); n > 0 {
			if stack[n-1].obj {
				stack[n-1].want = true
			} else {
				stack[n-1].idx++
			}
		}
	}
	for off := int64(0); ; {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil // not JSON: the decoder that follows says so
		}
		end := dec.InputOffset()
		raw := text[off:end]
		off = end
		switch x := tok.(type) {
		case json.Delim:
			switch x {
			case '{':
				stack = append(stack, frame{obj: true, want: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				value()
			}
			continue
		case string:
			key := len(stack) > 0 && stack[len(stack)-1].obj && stack[len(stack)-1].want
			if i, what := badJSONString(raw); i >= 0 {
				at := int(end) - len(raw) + i
				if key {
					inside := ""
					if p := path(); p != "" {
						inside = " in " + p
					}
					return fmt.Errorf("a column name%s: %s at byte %d of the record", inside, what, at)
				}
				return fmt.Errorf("field %s: %s at byte %d of the record", path(), what, at)
			}
			if key {
				stack[len(stack)-1].key, stack[len(stack)-1].want = x, false
				continue
			}
		}
		value()
	}
}

// maybeSurrogate reports whether text may escape a surrogate (\uD800 to
// \uDFFF); a yes is checked exactly by badJSONString.
func maybeSurrogate(text []byte) bool {
	for i := 0; ; {
		j := bytes.Index(text[i:], []byte(`\u`))
		if j < 0 || i+j+3 >= len(text) {
			return false
		}
		i += j + 2
		if (text[i] == 'd' || text[i] == 'D') && strings.IndexByte("89abcdefABCDEF", text[i+1]) >= 0 {
			return true
		}
	}
}

// badJSONString finds, in the raw bytes of one JSON string token (with any
// delimiter before it), the first byte that is not UTF-8 or the first
// escape of an unpaired surrogate: its offset and what it is, or -1.
func badJSONString(raw []byte) (int, string) {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) {
			if raw[i+1] != 'u' {
				i += 2
				continue
			}
			r := hex4(raw, i+2)
			switch {
			case r >= 0xD800 && r < 0xDC00:
				if i+11 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
					if lo := hex4(raw, i+8); lo >= 0xDC00 && lo < 0xE000 {
						i += 12
						continue
					}
				}
				return i, "an unpaired surrogate escape " + string(raw[i:i+6])
			case r >= 0xDC00 && r < 0xE000:
				return i, "an unpaired surrogate escape " + string(raw[i:i+6])
			}
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && n == 1 {
			return i, "invalid UTF-8"
		}
		i += n
	}
	return -1, ""
}

// hex4 reads four hex digits at raw[i:], or -1.
func hex4(raw []byte, i int) int {
	if i+4 > len(raw) {
		return -1
	}
	v, err := strconv.ParseUint(string(raw[i:i+4]), 16, 16)
	if err != nil {
		return -1
	}
	return int(v)
}

// Blank reports whether an item text is empty or only white space.
func Blank(s string) bool { return strings.TrimSpace(s) == "" }
