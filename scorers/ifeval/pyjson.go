package ifeval

// pyJSONValid reports whether Python's json.loads(s) succeeds. It differs
// from encoding/json.Valid in accepting NaN, Infinity and -Infinity, which
// Python's decoder allows by default. Nesting deeper than Python's default
// recursion limit, where json.loads raises RecursionError, counts as invalid.
func pyJSONValid(s string) bool {
	p := jsonScanner{s: s}
	p.ws()
	if !p.value(0) {
		return false
	}
	p.ws()
	return p.i == len(p.s)
}

type jsonScanner struct {
	s string
	i int
}

const maxJSONDepth = 990

func (p *jsonScanner) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScanner) lit(w string) bool {
	if len(p.s)-p.i >= len(w) && p.s[p.i:p.i+len(w)] == w {
		p.i += len(w)
		return true
	}
	return false
}

func (p *jsonScanner) value(depth int) bool {
	if p.i >= len(p.s) || depth > maxJSONDepth {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		p.ws()
		if p.lit("}") {
			return true
		}
		for {
			if p.i >= len(p.s) || p.s[p.i] != '"' || !p.str() {
				return false
			}
			p.ws()
			if !p.lit(":") {
				return false
			}
			p.ws()
			if !p.value(depth + 1) {
				return false
			}
			p.ws()
			if p.lit("}") {
				return true
			}
			if !p.lit(",") {
				return false
			}
			p.ws()
		}
	case c == '[':
		p.i++
		p.ws()
		if p.lit("]") {
			return true
		}
		for {
			if !p.value(depth + 1) {
				return false
			}
			p.ws()
			if p.lit("]") {
				return true
			}
			if !p.lit(",") {
				return false
			}
			p.ws()
		}
	case c == '"':
		return p.str()
	case c == 'n':
		return p.lit("null")
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'N':
		return p.lit("NaN")
	case c == 'I':
		return p.lit("Infinity")
	case c == '-' && p.lit("-Infinity"):
		return true
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *jsonScanner) number() bool {
	s := p.s
	if s[p.i] == '-' {
		p.i++
	}
	if p.i >= len(s) || !isDigit(s[p.i]) {
		return false
	}
	if s[p.i] == '0' {
		p.i++
	} else {
		for p.i < len(s) && isDigit(s[p.i]) {
			p.i++
		}
	}
	if p.i+1 < len(s) && s[p.i] == '.' && isDigit(s[p.i+1]) {
		p.i++
		for p.i < len(s) && isDigit(s[p.i]) {
			p.i++
		}
	}
	if p.i < len(s) && (s[p.i] == 'e' || s[p.i] == 'E') {
		j := p.i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			p.i = j
		}
	}
	return true
}

func (p *jsonScanner) str() bool {
	p.i++ // opening quote
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return false
			}
			switch p.s[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				if p.i+6 > len(p.s) {
					return false
				}
				for _, h := range []byte(p.s[p.i+2 : p.i+6]) {
					if !(isDigit(h) || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				p.i += 6
			default:
				return false
			}
		default:
			p.i++
		}
	}
	return false
}
