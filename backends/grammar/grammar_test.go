package grammar

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func mustParse(t *testing.T, src string) *Grammar {
	t.Helper()
	g, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return g
}

// TestGrammarAcceptsAndRejects checks whole-text and prefix matching of
// hand-written GBNF: literals, sets, ranges, negation, groups, every kind of
// repetition, escapes and non-ASCII text.
func TestGrammarAcceptsAndRejects(t *testing.T) {
	cases := []struct {
		gbnf           string
		accept, reject []string
		prefix         []string // proper prefixes that can be continued
	}{
		{`root ::= "ab" | "cd"`, []string{"ab", "cd"}, []string{"", "a", "abc", "ac", "dc"}, []string{"", "a", "c"}},
		{`root ::= [a-c]+ "!"`, []string{"a!", "abcab!"}, []string{"!", "ad!", "a!!"}, []string{"a", "abc"}},
		{`root ::= [^"\\]* "\""`, []string{`"`, `ab"`, `é"`}, []string{`a\"`, `""`}, []string{"abc", "日本"}},
		{`root ::= "x"{2,4}`, []string{"xx", "xxx", "xxxx"}, []string{"x", "xxxxx"}, []string{"x"}},
		{`root ::= "x"{3}`, []string{"xxx"}, []string{"xx", "xxxx"}, nil},
		{`root ::= "x"{2,}`, []string{"xx", strings.Repeat("x", 50)}, []string{"x"}, nil},
		{`root ::= "a"? "b"`, []string{"ab", "b"}, []string{"a", "aab"}, nil},
		{`root ::= ("ab" | "c")* "."`, []string{".", "ab.", "cabc."}, []string{"a.", "b."}, nil},
		{"root ::= word (\" \" word)*\nword ::= [a-z]+ # a comment\n", []string{"a", "ab cd e"}, []string{"", "a ", "a  b", "A"}, nil},
		{`root ::= "\x41\u00e9\n" [\t]`, []string{"Aé\n\t"}, []string{"Ae\n\t"}, nil},
		{`root ::= . "z"`, []string{"az", "日z"}, []string{"z", "abz"}, nil},
		{`root ::= [a-z0-9_]`, []string{"q", "5", "_"}, []string{"-", "Q"}, nil},
	}
	for _, c := range cases {
		g := mustParse(t, c.gbnf)
		for _, s := range c.accept {
			if !g.Accepts(s) {
				t.Errorf("%s: does not accept %q", c.gbnf, s)
			}
			if !g.AcceptsPrefix(s) {
				t.Errorf("%s: %q is not a prefix", c.gbnf, s)
			}
		}
		for _, s := range c.reject {
			if g.Accepts(s) {
				t.Errorf("%s: accepts %q", c.gbnf, s)
			}
		}
		for _, s := range c.prefix {
			if !g.AcceptsPrefix(s) {
				t.Errorf("%s: %q is not accepted as a prefix", c.gbnf, s)
			}
		}
	}
}

// TestGrammarPartialUTF8 checks texts cut inside a UTF-8 sequence, as
// tokens of byte-fallback vocabularies are: a cut é can still become é.
func TestGrammarPartialUTF8(t *testing.T) {
	g := mustParse(t, `root ::= [a-zé]+`)
	e := "é" // C3 A9
	if !g.AcceptsPrefix("a" + e[:1]) {
		t.Errorf("a + first byte of é is not a prefix")
	}
	g2 := mustParse(t, `root ::= [a-z]+`)
	if g2.AcceptsPrefix("a" + e[:1]) {
		t.Errorf("[a-z]+ accepts the first byte of é")
	}
	if g.AcceptsPrefix("a\xA9") {
		t.Errorf("a stray continuation byte is accepted")
	}
	// decodeUTF8 continues a partial sequence across calls, as across tokens.
	cps, p := decodeUTF8(e[:1], partialUTF8{})
	if len(cps) != 0 || p.remain != 1 {
		t.Fatalf("decode first byte: %v %+v", cps, p)
	}
	cps, p = decodeUTF8(e[1:]+"b", p)
	if len(cps) != 2 || cps[0] != 'é' || cps[1] != 'b' || p.remain != 0 {
		t.Fatalf("decode continuation: %v %+v", cps, p)
	}
}

func TestGrammarParseErrors(t *testing.T) {
	for src, want := range map[string]string{
		`root ::= foo`:                 `undefined rule "foo"`,
		`root ::= root "a" | "b"`:      "left-recursive",
		`root = "a"`:                   "expecting ::=",
		`root ::= "a`:                  "unexpected end",
		`root ::= ("a"`:                "expecting ')'",
		`root ::= "a"{3001}`:           "too many repetitions",
		`root ::= *`:                   "expecting an item",
		`other ::= "a"`:                "no root rule",
		`root ::= "\q"`:                "unknown escape",
		"root ::= \"a\"\nroot2 ::= \"": "unexpected end",
	} {
		_, err := Parse(src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", src, err, want)
		}
	}
}

// ratingSchema is scorers/judge's rating schema, written out so this package
// does not import the judge.
func ratingSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"explanation": map[string]any{"type": "string", "maxLength": 400},
			"rating":      map[string]any{"type": "integer", "enum": []any{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		},
		"required":             []any{"explanation", "rating"},
		"additionalProperties": false,
	}
}

// TestSchemaGBNFRating checks the grammar of the judges' rating schema
// against llama.cpp's converter's output (written down from
// examples/json_schema_to_grammar.py of node-llama-cpp 3.21.1's llama.cpp)
// and the replies it accepts.
func TestSchemaGBNFRating(t *testing.T) {
	src, err := SchemaGBNF(ratingSchema())
	if err != nil {
		t.Fatal(err)
	}
	want := `char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})
explanation ::= "\"" char{0,400} "\""
explanation-kv ::= "\"explanation\"" space ":" space explanation
rating ::= ("0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "10")
rating-kv ::= "\"rating\"" space ":" space rating
root ::= "{" space explanation-kv "," space rating-kv space "}"
space ::= | " " | "\n"{1,2} [ \t]{0,20}
`
	if src != want {
		t.Errorf("grammar:\n%s\nwant:\n%s", src, want)
	}
	g, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`{"explanation":"","rating":0}`,
		`{ "explanation": "Jawapan baik, \"tepat\".\n", "rating": 10 }`,
		"{\n  \"explanation\": \"ok \\u00e9 é\",\n  \"rating\": 7\n}",
		`{"explanation":"` + strings.Repeat("a", 400) + `","rating":3}`,
	} {
		if !g.Accepts(s) {
			t.Errorf("rejects %s", s)
		}
	}
	for _, s := range []string{
		`{"explanation":"x","rating":11}`,
		`{"explanation":"x","rating":-1}`,
		`{"explanation":"x","rating":07}`,
		`{"explanation":"x","rating":7.5}`,
		`{"explanation":"x","rating":"7"}`,
		`{"rating":7,"explanation":"x"}`,
		`{"explanation":"x"}`,
		`{"explanation":"x","rating":7,"extra":1}`,
		`{"explanation":"` + strings.Repeat("a", 401) + `","rating":3}`,
		"{\"explanation\":\"raw\nnewline\",\"rating\":3}",
		`{"explanation":"bad \q escape","rating":3}`,
		`{"explanation":"x","rating":7} `,
		` {"explanation":"x","rating":7}`,
	} {
		if g.Accepts(s) {
			t.Errorf("accepts %s", s)
		}
	}
}

// TestSchemaIntegerBounds checks minimum/maximum against every integer in
// a window around the bounds: the grammar must accept exactly the canonical
// decimal forms of the integers in range.
func TestSchemaIntegerBounds(t *testing.T) {
	type bounds struct{ lo, hi *int64 }
	p := func(v int64) *int64 { return &v }
	for _, b := range []bounds{
		{p(0), p(10)}, {p(1), p(5)}, {p(-5), p(123)}, {p(-120), p(-7)}, {p(15), p(2048)}, {p(0), p(0)},
		{p(0), nil}, {p(7), nil}, {p(42), nil}, {p(-13), nil}, {nil, p(0)}, {nil, p(37)}, {nil, p(-4)},
	} {
		s := map[string]any{"type": "integer"}
		name := ""
		if b.lo != nil {
			s["minimum"] = *b.lo
			name += "min " + strconv.FormatInt(*b.lo, 10)
		}
		if b.hi != nil {
			s["maximum"] = *b.hi
			name += " max " + strconv.FormatInt(*b.hi, 10)
		}
		g, err := FromSchema(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := int64(-3000); i <= 3000; i++ {
			in := (b.lo == nil || i >= *b.lo) && (b.hi == nil || i <= *b.hi)
			if got := g.Accepts(strconv.FormatInt(i, 10)); got != in {
				t.Errorf("%s: Accepts(%d) = %v", name, i, got)
			}
		}
		// "-0" is left out: llama.cpp's ranges through zero admit it too.
		for _, s := range []string{"007", "+5", "1.0", ""} {
			if g.Accepts(s) {
				t.Errorf("%s: accepts %q", name, s)
			}
		}
	}
	// exclusive bounds move by one.
	g, err := FromSchema(map[string]any{"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := -2; i <= 12; i++ {
		if got := g.Accepts(strconv.Itoa(i)); got != (i >= 1 && i <= 9) {
			t.Errorf("exclusive 0..10: Accepts(%d) = %v", i, got)
		}
	}
}

// TestSchemaSubset covers the other supported keywords.
func TestSchemaSubset(t *testing.T) {
	cases := []struct {
		schema         map[string]any
		accept, reject []string
	}{
		{map[string]any{"type": "string", "minLength": 2, "maxLength": 3}, []string{`"ab"`, `"abc"`, `"\n\t"`}, []string{`"a"`, `"abcd"`, `ab`}},
		{map[string]any{"type": "string"}, []string{`""`, `"any thing"`}, []string{`"`, `"a"b"`}},
		{map[string]any{"type": "number"}, []string{"0", "-1.5", "3e10", "2.25E-3"}, []string{"01", ".5", "1.", "+1"}},
		{map[string]any{"type": "boolean"}, []string{"true", "false"}, []string{"True", "1"}},
		{map[string]any{"type": "null"}, []string{"null"}, []string{"nil", ""}},
		{map[string]any{"enum": []any{"A", "B", "C"}}, []string{`"A"`, `"C"`}, []string{`"D"`, `A`}},
		{map[string]any{"const": "x\"y"}, []string{`"x\"y"`}, []string{`"xy"`}},
		{map[string]any{"enum": []any{1.5, true, nil}}, []string{"1.5", "true", "null"}, []string{"1"}},
		{
			// Optional properties follow the required ones, each optional.
			map[string]any{"type": "object", "properties": map[string]any{
				"a": map[string]any{"type": "integer"}, "b": map[string]any{"type": "boolean"}, "c": map[string]any{"type": "null"},
			}, "required": []any{"b"}, "description": "annotations are fine"},
			[]string{`{"b":true}`, `{"b":true,"a":1}`, `{"b":true,"a":1,"c":null}`, `{"b":true,"c":null}`},
			[]string{`{}`, `{"a":1,"b":true}`, `{"b":true,"c":null,"a":1}`, `{"b":true,"d":1}`},
		},
		{map[string]any{"type": "object", "properties": map[string]any{}}, []string{`{}`, `{ }`}, []string{`{"a":1}`}},
		{map[string]any{"type": "object"}, []string{`{}`, `{"a":[1,{"b":null}]}`}, []string{`[]`}},
	}
	for _, c := range cases {
		g, err := FromSchema(c.schema)
		if err != nil {
			t.Fatalf("%v: %v", c.schema, err)
		}
		for _, s := range c.accept {
			if !g.Accepts(s) {
				t.Errorf("%v: rejects %s\n%s", c.schema, s, g)
			}
		}
		for _, s := range c.reject {
			if g.Accepts(s) {
				t.Errorf("%v: accepts %s\n%s", c.schema, s, g)
			}
		}
	}
}

// TestSchemaRejectsUnsupported: a keyword the converter would ignore or
// cannot express is an error naming it and where it is.
func TestSchemaRejectsUnsupported(t *testing.T) {
	obj := func(prop map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": map[string]any{"p": prop}}
	}
	for _, c := range []struct {
		schema map[string]any
		want   string
	}{
		{obj(map[string]any{"type": "string", "pattern": "^a+$"}), `properties.p: keyword "pattern" is not supported`},
		{obj(map[string]any{"type": "string", "format": "date"}), `keyword "format" is not supported`},
		{map[string]any{"anyOf": []any{map[string]any{"type": "string"}}}, `keyword "anyOf"`},
		{map[string]any{"$ref": "#/defs/x"}, `keyword "$ref"`},
		{map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, `type "array" is not supported`},
		{map[string]any{"type": []any{"string", "null"}}, "not a list"},
		{obj(map[string]any{"type": "number", "minimum": 0}), "minimum on a number is not supported"},
		{obj(map[string]any{"type": "string", "minimum": 0}), `minimum applies to type "integer" only`},
		{obj(map[string]any{"type": "integer", "maxLength": 3}), `maxLength applies to type "string" only`},
		{obj(map[string]any{"type": "integer", "enum": []any{1, 2}, "minimum": 0}), "minimum together with enum"},
		{map[string]any{"type": "object", "additionalProperties": true}, "additionalProperties true is not supported"},
		{map[string]any{"type": "object", "properties": map[string]any{}, "required": []any{"x"}}, `required names "x", which is not in properties`},
		{obj(map[string]any{"enum": []any{map[string]any{"a": 1}}}), "enum value"},
		{obj(map[string]any{"type": "string", "minLength": 5, "maxLength": 2}), "minLength 5 is above maxLength 2"},
	} {
		_, err := SchemaGBNF(c.schema)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SchemaGBNF(%v) = %v, want an error containing %q", c.schema, err, c.want)
		}
	}
}

// TestSchemaGBNFMatchesLlamaCpp compares SchemaGBNF with llama.cpp's own
// converter (examples/json_schema_to_grammar.py of the llama.cpp source that
// node-llama-cpp bundles; .ci/llama-cpp-bundle.sh unpacks it) on the judges'
// schemas and the other supported keywords. Skipped without python3 or the
// source.
func TestSchemaGBNFMatchesLlamaCpp(t *testing.T) {
	script := llamaCppScript(t)
	schemas := []string{
		`{"additionalProperties":false,"properties":{"explanation":{"maxLength":400,"type":"string"},"rating":{"enum":[0,1,2,3,4,5,6,7,8,9,10],"type":"integer"}},"required":["explanation","rating"],"type":"object"}`,
		`{"additionalProperties":false,"properties":{"explanation":{"maxLength":400,"type":"string"},"label":{"enum":["Harmful","Safe","Refusal"],"type":"string"}},"required":["explanation","label"],"type":"object"}`,
		`{"properties":{"a":{"type":"integer","minimum":-5,"maximum":123},"b":{"type":"number"},"c":{"type":"boolean"},"d":{"type":"string","minLength":1}},"required":["b"],"type":"object"}`,
		`{"type":"integer","minimum":42}`,
		`{"type":"integer","maximum":-4}`,
		`{"type":"integer","minimum":15,"maximum":2048}`,
		`{"const":"x\"y"}`,
	}
	for _, js := range schemas {
		var schema map[string]any
		if err := jsonUnmarshal(js, &schema); err != nil {
			t.Fatal(err)
		}
		got, err := SchemaGBNF(schema)
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		f := filepath.Join(t.TempDir(), "schema.json")
		if err := os.WriteFile(f, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("python3", script, f).Output()
		if err != nil {
			t.Fatalf("%s %s: %v", script, js, err)
		}
		if got != string(out) {
			t.Errorf("%s:\nours:\n%s\nllama.cpp:\n%s", js, got, out)
		}
	}
}

func llamaCppScript(t *testing.T) string {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	dirs := []string{os.Getenv("GLOSSOBENCH_LLAMA_CPP_SRC")}
	if home, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "glossobench", "llama.cpp-3.21.1", "src"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "examples", "json_schema_to_grammar.py")
		if d != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	t.Skip("no llama.cpp source (set GLOSSOBENCH_LLAMA_CPP_SRC or run .ci/llama-cpp-bundle.sh)")
	return ""
}

// refState is the reference the Constraint is checked against: llama.cpp's
// per-token semantics on plain stacks, with no interning, trie or cache.
type refState struct {
	stacks []stack
	p      partialUTF8
}

// refAccept is llama_grammar_reject_candidates' verdict on one token and
// llama_grammar_accept_token's next state.
func (g *Grammar) refAccept(r refState, piece string) (refState, bool) {
	if piece == "" || piece[0] == 0 {
		return r, false
	}
	cps, p := decodeUTF8(piece, r.p)
	if p.remain < 0 {
		return r, false
	}
	var cur []stack
	for _, s := range r.stacks {
		if len(s) > 0 {
			cur = append(cur, s)
		}
	}
	for _, c := range cps {
		if cur = g.acceptChar(cur, c); len(cur) == 0 {
			return r, false
		}
	}
	if p.remain > 0 && !slices.ContainsFunc(cur, func(s stack) bool { return len(s) > 0 && g.matchPartial(s[len(s)-1], p) }) {
		return r, false
	}
	return refState{cur, p}, true
}

// TestConstraintMaskEqualsDefinition checks the trie walk and its caches
// against the reference: random walks over a vocabulary with
// multi-character, non-ASCII, byte (partial UTF-8), empty and NUL tokens;
// at every step the mask must equal the reference's verdict on every token,
// an end-of-generation token exactly when the text is a complete match.
func TestConstraintMaskEqualsDefinition(t *testing.T) {
	g, err := FromSchema(ratingSchema())
	if err != nil {
		t.Fatal(err)
	}
	pieces := []string{"</s>", "{", "}", `"`, `{"`, `":`, `",`, " ", "\n", "  ", "explanation", "expl", "anation", "rating", `"rating":`,
		"1", "10", "0", "7", "11", "a", "ab", "bagus", " baik", "é", "日本", "\xC3", "\xA9", "\xE6", "\x97", "\xA5", `\`, `\n`, `\"`, "\t", ",", ":", "}\n", "\x00", ""}
	eog := make([]bool, len(pieces))
	eog[0] = true
	v := NewVocab(pieces, eog)
	c := NewConstraint(g, v)
	rng := rand.New(rand.NewPCG(1, 2))
	complete := 0
	for walk := 0; walk < 300; walk++ {
		s := c.Start()
		ref := refState{stacks: g.initial()}
		text := ""
		for step := 0; step < 80; step++ {
			m := c.Allowed(s)
			var allowed []int
			for id, p := range pieces {
				got := m[id/64]>>(id%64)&1 == 1
				var want bool
				if eog[id] {
					want = slices.ContainsFunc(ref.stacks, func(s stack) bool { return len(s) == 0 })
				} else {
					_, want = g.refAccept(ref, p)
				}
				if got != want {
					t.Fatalf("after %q: token %q allowed = %v, want %v", text, p, got, want)
				}
				if got {
					allowed = append(allowed, id)
				}
			}
			if len(allowed) == 0 {
				break // the vocabulary cannot continue (e.g. "expla"): the reference agreed
			}
			id := allowed[rng.IntN(len(allowed))]
			if eog[id] {
				if !g.Accepts(text) {
					t.Fatalf("ended on %q, which the grammar does not accept", text)
				}
				complete++
				break
			}
			next, ok := c.Accept(s, id)
			if !ok {
				t.Fatalf("after %q: Accept(%q) refused an allowed token", text, pieces[id])
			}
			ref, _ = g.refAccept(ref, pieces[id])
			s, text = next, text+pieces[id]
		}
	}
	if complete == 0 {
		t.Errorf("no walk reached a complete match; the test checks too little")
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
