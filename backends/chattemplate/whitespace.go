package chattemplate

import (
	"fmt"
	"regexp"
	"strings"
)

// The Jinja engine's whitespace control reaches past a neighbouring tag to
// the next text: in `{% if x %}{{ y }}\n{% endif %}` it lets the if tag's
// trim_blocks eat the newline after {{ y }}, which Python's Jinja (and
// llama.cpp) keep. The bug is in ardanlabs/jinja v1.8.0 and its newest
// source alike. So whitespace control is applied here, as Python's Jinja
// lexer applies it with the trim_blocks and lstrip_blocks options that
// transformers and llama.cpp use, and every text run is handed to the engine
// as a string literal ({{ '...' }}), which it leaves alone.

// piece is one scanned part of a template: text, or a tag with its
// delimiters and whitespace-control signs.
type piece struct {
	text        string // text, or the tag's inside without delimiters and signs
	kind        byte   // 0 text, '{' expression, '%' statement, '#' comment
	left, right byte   // '-', '+' or 0: the signs after the opener, before the closer
}

var rawStart = regexp.MustCompile(`^\s*raw\s*$`)
var rawEnd = regexp.MustCompile(`\{%([-+]?)\s*endraw\s*([-+]?)%\}`)

// scanTemplate splits src into text and tags, skipping quoted strings inside
// tags. {% raw %} blocks come back as text.
func scanTemplate(src string) ([]piece, error) {
	var out []piece
	line := func(pos int) int { return strings.Count(src[:pos], "\n") + 1 }
	for pos := 0; pos < len(src); {
		i := pos
		for i+1 < len(src) && !(src[i] == '{' && (src[i+1] == '{' || src[i+1] == '%' || src[i+1] == '#')) {
			i++
		}
		if i+1 >= len(src) {
			out = append(out, piece{text: src[pos:]})
			break
		}
		if i > pos {
			out = append(out, piece{text: src[pos:i]})
		}
		kind := src[i+1]
		closer := map[byte]string{'{': "}}", '%': "%}", '#': "#}"}[kind]
		p := piece{kind: kind}
		j := i + 2
		if j < len(src) && (src[j] == '-' || src[j] == '+') {
			p.left = src[j]
			j++
		}
		start, end := j, -1
		for j < len(src) {
			c := src[j]
			if kind != '#' && (c == '\'' || c == '"') {
				for j++; j < len(src) && src[j] != c; j++ {
					if src[j] == '\\' {
						j++
					}
				}
				j++
				continue
			}
			if strings.HasPrefix(src[j:], closer) {
				end = j
				break
			}
			j++
		}
		if end < 0 {
			return nil, fmt.Errorf("line %d: %s tag is not closed", line(i), map[byte]string{'{': "expression", '%': "statement", '#': "comment"}[kind])
		}
		if end > start && (src[end-1] == '-' || src[end-1] == '+') {
			p.right = src[end-1]
			end--
		}
		p.text = src[start:end]
		pos = end + len(closer)
		if p.right != 0 {
			pos++
		}
		if kind == '%' && rawStart.MatchString(p.text) {
			m := rawEnd.FindStringSubmatchIndex(src[pos:])
			if m == nil {
				return nil, fmt.Errorf("line %d: raw block is not closed by endraw", line(i))
			}
			out = append(out, p, piece{text: src[pos : pos+m[0]]})
			out = append(out, piece{kind: '%', text: "endraw", left: signAt(src, pos+m[2], pos+m[3]), right: signAt(src, pos+m[4], pos+m[5])})
			pos += m[1]
		}
		if kind == '{' || kind == '%' || kind == '#' {
			out = append(out, p)
		}
	}
	return out, nil
}

func signAt(s string, from, to int) byte {
	if from < to {
		return s[from]
	}
	return 0
}

// normalizeWhitespace rewrites src so that its output no longer depends on
// whitespace control: signs and the trim_blocks / lstrip_blocks rules are
// applied to the text, which becomes string literals; comments go. Lines
// keep their numbers, so the engine's errors still point into src.
func normalizeWhitespace(src string) (string, error) {
	// As Jinja's and llama.cpp's lexers do by default: newlines become
	// "\n", and one trailing newline is dropped (keep_trailing_newline off).
	src = strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", "\n")
	src = strings.TrimSuffix(src, "\n")
	ps, err := scanTemplate(src)
	if err != nil {
		return "", err
	}
	// Dropping the raw and endraw tags: their inside is already text.
	for i := range ps {
		if ps[i].kind == '%' && (rawStart.MatchString(ps[i].text) || strings.TrimSpace(ps[i].text) == "endraw") {
			ps[i].kind = '#'
		}
	}
	texts := make([]string, len(ps))
	for i, p := range ps {
		if p.kind == 0 {
			texts[i] = p.text
		}
	}
	// Left side of each tag, as Jinja's lexer does it: "-" strips all
	// whitespace before the tag; lstrip_blocks strips the spaces and tabs
	// that start the tag's line, for statements and comments not marked "+".
	lineStarting := true // at the template's start, or after a "\n"
	for i, p := range ps {
		if p.kind == 0 {
			continue
		}
		prevText := i > 0 && ps[i-1].kind == 0
		if prevText {
			t := texts[i-1]
			switch {
			case p.left == '-':
				texts[i-1] = strings.TrimRight(t, " \t\n\r\f\v")
			case p.left != '+' && p.kind != '{':
				lpos := strings.LastIndexByte(t, '\n') + 1
				atStart := lpos > 0 || (i-1 == 0) || (i >= 2 && lineStarting)
				if atStart && strings.Trim(t[lpos:], " \t") == "" {
					texts[i-1] = t[:lpos]
				}
			}
		}
		lineStarting = false
		// Right side: "-" strips all whitespace after the tag; trim_blocks
		// one newline after a statement or comment not marked "+".
		if i+1 < len(ps) && ps[i+1].kind == 0 {
			t := texts[i+1]
			switch {
			case p.right == '-':
				texts[i+1] = strings.TrimLeft(t, " \t\n\r\f\v")
			case p.right != '+' && p.kind != '{':
				if strings.HasPrefix(t, "\n") {
					texts[i+1], lineStarting = t[1:], true
				} else if strings.HasPrefix(t, "\r\n") {
					texts[i+1], lineStarting = t[2:], true
				}
			}
		}
	}
	var b strings.Builder
	for i, p := range ps {
		switch p.kind {
		case 0:
			if texts[i] != "" {
				b.WriteString("{{ '" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(texts[i]) + "' }}")
			}
			// Keep the line count of what whitespace control removed.
			b.WriteString(pad(strings.Count(p.text, "\n") - strings.Count(texts[i], "\n")))
		case '#':
			b.WriteString(pad(strings.Count(p.text, "\n")))
		default:
			b.WriteString("{" + string(p.kind) + p.text + map[byte]string{'{': "}}", '%': "%}"}[p.kind])
		}
	}
	return b.String(), nil
}

// pad is n newlines inside a do-nothing comment.
func pad(n int) string {
	if n <= 0 {
		return ""
	}
	return "{#" + strings.Repeat("\n", n) + "#}"
}
