package chrf

// The files and output formats of sacrebleu's command line, for the chrf
// command.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences scores each hypothesis against its line of every reference
// stream, as sacrebleu's --sentence-level does.
func (c *CHRF) Sentences(hyps []string, streams [][]string) []Score {
	sents := make([]Score, len(hyps))
	segRefs := make([]string, len(streams))
	for i, h := range hyps {
		for k, s := range streams {
			segRefs[k] = s[i]
		}
		sents[i] = c.Sentence(h, segRefs)
	}
	return sents
}

// ReadFiles reads the hypothesis and reference files as sacrebleu's
// command line does: lines split on "\n" only, trailing whitespace stripped.
func ReadFiles(hypPath string, refPaths []string) ([]string, [][]string, error) {
	hyps, err := readSegments(hypPath)
	if err != nil {
		return nil, nil, err
	}
	if len(hyps) == 0 {
		return nil, nil, fmt.Errorf("%s: no lines to score", hypPath)
	}
	streams := make([][]string, len(refPaths))
	for k, p := range refPaths {
		if streams[k], err = readSegments(p); err != nil {
			return nil, nil, err
		}
		if len(streams[k]) != len(hyps) {
			return nil, nil, fmt.Errorf("line count mismatch: %s has %d lines but %s has %d", hypPath, len(hyps), p, len(streams[k]))
		}
	}
	for i := range hyps {
		empty := true
		for _, s := range streams {
			empty = empty && s[i] == ""
		}
		if empty {
			return nil, nil, fmt.Errorf("line %d: empty reference in %s (sacrebleu refuses it too)", i+1, strings.Join(refPaths, ", "))
		}
	}
	return hyps, streams, nil
}

func readSegments(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, nil
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if !utf8.ValidString(l) {
			return nil, fmt.Errorf("%s:%d: not valid UTF-8", path, i+1)
		}
		// Python's str.rstrip(): str.isspace characters, which include U+001C..U+001F.
		lines[i] = strings.TrimRightFunc(l, func(r rune) bool {
			return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
		})
	}
	return lines, nil
}

// JSON renders the score like sacrebleu's Score.format(is_json=True):
// json.dumps(indent=1) of name, score rounded to width, signature and the
// signature's fields as strings, then the sentence scores when sents is
// not nil.
func JSON(total Score, sents []Score, width int) []byte {
	var b bytes.Buffer
	field := func(k, v string, last bool) {
		kb, _ := json.Marshal(k)
		b.WriteString(" " + string(kb) + ": " + v)
		if !last {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	str := func(s string) string { sb, _ := json.Marshal(s); return string(sb) }
	b.WriteString("{\n")
	field("name", str(total.Name), false)
	field("score", pyRounded(total.Score, width), false)
	field("signature", str(total.Signature), false)
	parts := strings.Split(total.Signature, "|")
	for i, p := range parts {
		k, v, _ := strings.Cut(p, ":")
		field(k, str(v), i == len(parts)-1 && sents == nil)
	}
	if sents != nil {
		vals := make([]string, len(sents))
		for i, s := range sents {
			vals[i] = "  " + pyRounded(s.Score, width)
		}
		field("sentences", "[\n"+strings.Join(vals, ",\n")+"\n ]", true)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// pyRounded prints float(f'{x:.{width}f}') as Python's json does: 54.3, 100.0.
func pyRounded(x float64, width int) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', width, 64), 64)
	s := strconv.FormatFloat(r, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
