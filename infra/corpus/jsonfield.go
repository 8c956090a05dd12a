package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// appendJSONField reads one JSON object (a JSONL line) and appends the
// decoded value of its top-level string field name to dst. When the key
// occurs more than once the last one counts, as with encoding/json. found is
// false when the key is absent or its value is not a string. It is a small
// hand-written scanner because encoding/json into a map costs far more than
// the rest of the screening; FuzzJSONField checks it against encoding/json.
func appendJSONField(dst, s, name []byte) (val []byte, found bool, err error) {
	var kbuf [64]byte
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return dst, false, errors.New("not a JSON object")
	}
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		i++
	} else {
		for {
			if i >= len(s) || s[i] != '"' {
				return dst, false, fmt.Errorf("byte %d: want a key", i)
			}
			key, j, err := appendJSONString(kbuf[:0], s, i)
			if err != nil {
				return dst, false, err
			}
			i = skipWS(s, j)
			if i >= len(s) || s[i] != ':' {
				return dst, false, fmt.Errorf("byte %d: want ':'", i)
			}
			i = skipWS(s, i+1)
			if bytes.Equal(key, name) {
				if i < len(s) && s[i] == '"' {
					val, i, err = appendJSONString(dst[:0], s, i)
					found = true
				} else {
					found = false
					i, err = skipJSONValue(s, i, 0)
				}
			} else {
				i, err = skipJSONValue(s, i, 0)
			}
			if err != nil {
				return dst, false, err
			}
			i = skipWS(s, i)
			if i < len(s) && s[i] == ',' {
				i = skipWS(s, i+1)
				continue
			}
			if i < len(s) && s[i] == '}' {
				i++
				break
			}
			return dst, false, fmt.Errorf("byte %d: want ',' or '}'", i)
		}
	}
	if i = skipWS(s, i); i != len(s) {
		return dst, false, fmt.Errorf("byte %d: data after the object", i)
	}
	if !found {
		return dst, false, nil
	}
	return val, true, nil
}

func skipWS(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

const maxJSONDepth = 1000

func skipJSONValue(s []byte, i, depth int) (int, error) {
	if depth > maxJSONDepth {
		return i, errors.New("JSON nested too deep")
	}
	if i >= len(s) {
		return i, errors.New("unexpected end of line")
	}
	switch c := s[i]; {
	case c == '"':
		return skipJSONString(s, i)
	case c == '{' || c == '[':
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		i = skipWS(s, i+1)
		if i < len(s) && s[i] == close {
			return i + 1, nil
		}
		for {
			var err error
			if c == '{' {
				if i >= len(s) || s[i] != '"' {
					return i, fmt.Errorf("byte %d: want a key", i)
				}
				if i, err = skipJSONString(s, i); err != nil {
					return i, err
				}
				i = skipWS(s, i)
				if i >= len(s) || s[i] != ':' {
					return i, fmt.Errorf("byte %d: want ':'", i)
				}
				i = skipWS(s, i+1)
			}
			if i, err = skipJSONValue(s, i, depth+1); err != nil {
				return i, err
			}
			i = skipWS(s, i)
			if i < len(s) && s[i] == ',' {
				i = skipWS(s, i+1)
				continue
			}
			if i < len(s) && s[i] == close {
				return i + 1, nil
			}
			return i, fmt.Errorf("byte %d: want ',' or %q", i, close)
		}
	case c == 't':
		return skipLiteral(s, i, "true")
	case c == 'f':
		return skipLiteral(s, i, "false")
	case c == 'n':
		return skipLiteral(s, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		j := i + 1
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E' || s[j] == '+' || s[j] == '-') {
			j++
		}
		return j, nil
	}
	return i, fmt.Errorf("byte %d: unexpected %q", i, s[i])
}

func skipLiteral(s []byte, i int, lit string) (int, error) {
	if !bytes.HasPrefix(s[i:], []byte(lit)) {
		return i, fmt.Errorf("byte %d: bad literal", i)
	}
	return i + len(lit), nil
}

func skipJSONString(s []byte, i int) (int, error) {
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			j++
		case c < 0x20:
			return j, fmt.Errorf("byte %d: control character in string", j)
		}
	}
	return len(s), errors.New("unterminated string")
}

// appendJSONString decodes the string literal at s[i] (a '"') into dst and
// returns the index after it. Invalid UTF-8 and lone surrogates become
// U+FFFD, as in encoding/json.
func appendJSONString(dst, s []byte, i int) ([]byte, int, error) {
	j := i + 1
	for j < len(s) {
		// Bulk-copy the plain run.
		k := j
		for k < len(s) {
			c := s[k]
			if c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
				break
			}
			k++
		}
		dst = append(dst, s[j:k]...)
		j = k
		if j >= len(s) {
			break
		}
		switch c := s[j]; {
		case c == '"':
			return dst, j + 1, nil
		case c < 0x20:
			return dst, j, fmt.Errorf("byte %d: control character in string", j)
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(s[j:])
			if r == utf8.RuneError && n == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[j:j+n]...)
			}
			j += n
		default: // backslash
			if j+1 >= len(s) {
				return dst, j, errors.New("unterminated string")
			}
			e := s[j+1]
			j += 2
			switch e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, ok := hex4(s, j)
				if !ok {
					return dst, j, fmt.Errorf("byte %d: bad \\u escape", j)
				}
				j += 4
				if utf16.IsSurrogate(r) {
					if j+1 < len(s) && s[j] == '\\' && s[j+1] == 'u' {
						if r2, ok := hex4(s, j+2); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								dst = utf8.AppendRune(dst, dec)
								j += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
			default:
				return dst, j, fmt.Errorf("byte %d: bad escape \\%c", j-1, e)
			}
		}
	}
	return dst, j, errors.New("unterminated string")
}

func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
