package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"gopkg.in/yaml.v3"
)

// Expr is one value of a mapping: the name of a column (a dotted path into
// nested records and lists, such as prompts.0.text; a trailing "?" makes a
// missing column read as empty), or a Go text/template when it contains
// "{{" (see the package documentation).
type Expr string

// IsTemplate reports whether e is a template rather than a column path.
func (e Expr) IsTemplate() bool { return strings.Contains(string(e), "{{") }

// Choices are an MCQ's options: either a list of values, one per option
// (choices: [A, B, C, D]), or one value holding a list (choices: options).
type Choices struct {
	Each []Expr // one value per option, in order
	List Expr   // one value that is a list of options
}

// IsZero lets omitempty drop unset choices.
func (c Choices) IsZero() bool { return len(c.Each) == 0 && c.List == "" }

// UnmarshalYAML reads a scalar as List and a sequence as Each.
func (c *Choices) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Decode(&c.List)
	case yaml.SequenceNode:
		return n.Decode(&c.Each)
	}
	return fmt.Errorf("line %d: fields.choices: want a column holding a list, or a list of columns or templates", n.Line)
}

// MarshalYAML writes the form that was read (the config hash covers it).
func (c Choices) MarshalYAML() (any, error) {
	if c.List != "" {
		return string(c.List), nil
	}
	return c.Each, nil
}

// Mapping says how the columns of a dataset's rows become an item
// (DatasetConfig.Fields). Which keys an axis reads is in Kinds.
type Mapping struct {
	ID       Expr `yaml:"id,omitempty" json:"id,omitempty"`             // row id; default the line number
	Prompt   Expr `yaml:"prompt,omitempty" json:"prompt,omitempty"`     // the whole prompt, replacing the axis's rendering
	Question Expr `yaml:"question,omitempty" json:"question,omitempty"` // MCQ question
	Passage  Expr `yaml:"passage,omitempty" json:"passage,omitempty"`   // MCQ reading passage
	// Premise and Hypothesis make an NLI item (sentence 1 and 2).
	Premise    Expr    `yaml:"premise,omitempty" json:"premise,omitempty"`
	Hypothesis Expr    `yaml:"hypothesis,omitempty" json:"hypothesis,omitempty"`
	Choices    Choices `yaml:"choices,omitempty" json:"choices,omitempty"`
	// ChoicesText is one text holding lettered option lines ("A: ...",
	// "A. ..." or "A) ..."); a line without a letter continues the option above.
	ChoicesText Expr `yaml:"choices_text,omitempty" json:"choices_text,omitempty"`
	// ChoiceTexts are fixed options by item language ("*" for any other),
	// for NLI where every row has the same three statements.
	ChoiceTexts map[string][]string `yaml:"choice_texts,omitempty" json:"choice_texts,omitempty"`
	Answer      Expr                `yaml:"answer,omitempty" json:"answer,omitempty"`
	// AnswerAs says how answer names the gold option: letter (A, B, ...),
	// index (0-based), text (an option's text) or auto (a letter or a
	// 0-based index, the default). With labels it is the label.
	AnswerAs string `yaml:"answer_as,omitempty" json:"answer_as,omitempty"`
	// Labels are the answer values in option order (entailment,
	// contradiction, neutral); the item's label is the value read.
	Labels   []string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Source   Expr     `yaml:"source,omitempty" json:"source,omitempty"`     // pooling tag for the leakage audit; default the dataset
	Lang     Expr     `yaml:"lang,omitempty" json:"lang,omitempty"`         // item language; default the dataset's lang
	Register Expr     `yaml:"register,omitempty" json:"register,omitempty"` // HIGH | MID | LOW per row
	// References are the NLG reference translations (a text or a list).
	References Expr `yaml:"references,omitempty" json:"references,omitempty"`
	// Text is the NLG source text (what is translated), kept for reports.
	Text Expr `yaml:"text,omitempty" json:"text,omitempty"`
	// Direction is the NLG translation direction, SRC-TGT (en-ms); default
	// the dataset's lang when it is written so.
	Direction Expr `yaml:"direction,omitempty" json:"direction,omitempty"`
	// AnswerTag is the label the NLG prompt asks the answer to follow
	// ("Terjemahan:"); the text after it is scored. Default none: the
	// whole reply is the translation.
	AnswerTag Expr `yaml:"answer_tag,omitempty" json:"answer_tag,omitempty"`
	// Task groups items that are one task for contamination screening (the
	// two directions of one passage pair); default the item itself.
	Task           Expr `yaml:"task,omitempty" json:"task,omitempty"`
	Turns          Expr `yaml:"turns,omitempty" json:"turns,omitempty"`                     // MT user turns (a list)
	Category       Expr `yaml:"category,omitempty" json:"category,omitempty"`               // MT category
	InstructionIDs Expr `yaml:"instruction_ids,omitempty" json:"instruction_ids,omitempty"` // IF instruction_id_list (a list)
	Kwargs         Expr `yaml:"kwargs,omitempty" json:"kwargs,omitempty"`                   // IF kwargs (a list of objects)
	// Topic is the Safety breakdown (SEA-HELM's metadata.topic); default
	// the value the source field read.
	Topic Expr `yaml:"topic,omitempty" json:"topic,omitempty"`
	// Label is the Safety prompt label; Harmful and Safe list its values.
	Label   Expr     `yaml:"label,omitempty" json:"label,omitempty"`
	Harmful []string `yaml:"harmful,omitempty" json:"harmful,omitempty"`
	Safe    []string `yaml:"safe,omitempty" json:"safe,omitempty"`

	lines map[string]int // config line of each key, for errors
}

// keys lists the mapping's YAML keys, in declaration order.
var keys = func() []string {
	var out []string
	t := reflect.TypeOf(Mapping{})
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("yaml"); tag != "" {
			out = append(out, strings.Split(tag, ",")[0])
		}
	}
	return out
}()

// UnmarshalYAML decodes strictly (an unknown key is an error naming its
// line) and remembers each key's line for later errors.
func (m *Mapping) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: fields: want a mapping of item fields to columns or templates", n.Line)
	}
	lines := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(keys, k.Value) {
			return fmt.Errorf("line %d: fields.%s: unknown field (known: %s)", k.Line, k.Value, strings.Join(keys, ", "))
		}
		lines[k.Value] = k.Line
	}
	type plain Mapping
	if err := n.Decode((*plain)(m)); err != nil {
		return err
	}
	m.lines = lines
	return nil
}

// where prefixes an error about key with its config line when known.
func (m *Mapping) where(key string) string {
	if l := m.lines[key]; l > 0 {
		return fmt.Sprintf("line %d: fields.%s", l, key)
	}
	return "fields." + key
}

// Kind is what an axis reads from a mapping.
type Kind struct {
	Allowed  []string   // keys the axis reads
	Required [][]string // each entry: at least one of these keys must be set
}

// Kinds are the axis kinds, by name: mcq (Knowledge, NLU, Cultural; NLI is
// an MCQ with premise and hypothesis), nlg, if, mt, safety.
var Kinds = map[string]Kind{
	"mcq": {
		Allowed:  []string{"id", "prompt", "question", "passage", "premise", "hypothesis", "choices", "choices_text", "choice_texts", "answer", "answer_as", "labels", "source", "lang", "register"},
		Required: [][]string{{"answer"}, {"choices", "choices_text", "choice_texts"}, {"question", "premise", "prompt"}},
	},
	"nlg":    {Allowed: []string{"id", "task", "prompt", "text", "references", "direction", "answer_tag", "source", "lang", "register"}, Required: [][]string{{"prompt"}, {"references"}}},
	"if":     {Allowed: []string{"id", "prompt", "instruction_ids", "kwargs", "source", "lang", "register"}, Required: [][]string{{"prompt"}, {"instruction_ids"}}},
	"mt":     {Allowed: []string{"id", "turns", "category", "references", "source", "lang", "register"}, Required: [][]string{{"id"}, {"turns"}, {"category"}}},
	"safety": {Allowed: []string{"id", "prompt", "label", "harmful", "safe", "source", "topic", "lang", "register"}, Required: [][]string{{"prompt"}, {"label"}, {"harmful"}, {"safe"}}},
}

// set returns the keys with a value.
func (m *Mapping) set() []string {
	var out []string
	for key, v := range m.keys() {
		if !v.IsZero() {
			out = append(out, key)
		}
	}
	return out
}

// keys yields each key of the mapping (a field's yaml name) with its value,
// in field order.
func (m *Mapping) keys() iter.Seq2[string, reflect.Value] {
	return func(yield func(string, reflect.Value) bool) {
		v := reflect.ValueOf(*m)
		t := v.Type()
		for i := range t.NumField() {
			tag := t.Field(i).Tag.Get("yaml")
			if tag == "" {
				continue
			}
			if !yield(strings.Split(tag, ",")[0], v.Field(i)) {
				return
			}
		}
	}
}

// Merge returns base with every key set in over replaced by over's value
// (a preset refined by a dataset's own fields).
func Merge(base, over Mapping) Mapping {
	out := base
	bv := reflect.ValueOf(&out).Elem()
	ov := reflect.ValueOf(over)
	for i := range ov.NumField() {
		if ov.Type().Field(i).Tag.Get("yaml") == "" {
			continue
		}
		if f := ov.Field(i); !f.IsZero() {
			bv.Field(i).Set(f)
		}
	}
	out.lines = over.lines
	return out
}

// Check validates a mapping for an axis kind without reading data: every
// key is one the axis reads, the required ones are there, answer_as is
// known and every template parses. Errors name the key (and its config
// line when the mapping came from YAML).
func (m *Mapping) Check(kind string) error {
	if err := m.checkKeys(kind); err != nil {
		return err
	}
	_, err := m.compile(Env{})
	return err
}

func (m *Mapping) checkKeys(kind string) error {
	k, ok := Kinds[kind]
	if !ok {
		return fmt.Errorf("fields: unknown axis kind %q", kind)
	}
	set := m.set()
	for _, key := range set {
		if !slices.Contains(k.Allowed, key) {
			return fmt.Errorf("%s: not read by the %s axes (they read: %s)", m.where(key), kind, strings.Join(k.Allowed, ", "))
		}
	}
	for _, any := range k.Required {
		if !slices.ContainsFunc(any, func(s string) bool { return slices.Contains(set, s) }) {
			return fmt.Errorf("fields.%s: required by the %s axes", strings.Join(any, " or fields."), kind)
		}
	}
	switch m.AnswerAs {
	case "", "auto", "letter", "index", "text":
	case "label":
		if len(m.Labels) == 0 {
			return fmt.Errorf("%s: label needs fields.labels", m.where("answer_as"))
		}
	default:
		return fmt.Errorf("%s: must be auto, letter, index, text or label, got %q", m.where("answer_as"), m.AnswerAs)
	}
	if len(m.Labels) > 0 && m.AnswerAs != "" && m.AnswerAs != "label" {
		return fmt.Errorf("%s: with fields.labels the answer is a label; leave answer_as out", m.where("answer_as"))
	}
	n := 0
	for _, key := range []string{"choices", "choices_text", "choice_texts"} {
		if slices.Contains(set, key) {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("fields: give one of choices, choices_text and choice_texts")
	}
	if len(m.Labels) > 0 && len(m.ChoiceTexts) > 0 {
		for lang, texts := range m.ChoiceTexts {
			if len(texts) != len(m.Labels) {
				return fmt.Errorf("%s.%s: %d texts for %d labels", m.where("choice_texts"), lang, len(texts), len(m.Labels))
			}
		}
	}
	return nil
}

// Env is what templates may read beside the row.
type Env struct {
	Lang string // the dataset's configured lang (datasetLang)
	// Funcs are template functions a preset adds (a built-in format's
	// rendering that is not a plain template, such as SEA-HELM's few-shot
	// prompts); they may not replace the documented ones.
	Funcs template.FuncMap
}

// Compiled is a checked mapping ready to read rows.
type Compiled struct {
	m     Mapping
	exprs map[string]Expr // key -> value, for every set expression
	tmpl  map[Expr]*template.Template
}

func (m *Mapping) exprs() map[string]Expr {
	out := map[string]Expr{}
	for key, v := range m.keys() {
		switch f := v.Interface().(type) {
		case Expr:
			if f != "" {
				out[key] = f
			}
		case Choices:
			if f.List != "" {
				out[key] = f.List
			}
			for j, e := range f.Each {
				out[fmt.Sprintf("%s[%d]", key, j)] = e
			}
		}
	}
	return out
}

// Compile checks the mapping for kind and compiles its templates.
func (m *Mapping) Compile(kind string, env Env) (*Compiled, error) {
	if err := m.checkKeys(kind); err != nil {
		return nil, err
	}
	return m.compile(env)
}

func (m *Mapping) compile(env Env) (*Compiled, error) {
	c := &Compiled{m: *m, exprs: m.exprs(), tmpl: map[Expr]*template.Template{}}
	for key, e := range c.exprs {
		if !e.IsTemplate() {
			if strings.TrimSuffix(string(e), "?") == "" {
				return nil, fmt.Errorf("%s: empty column name", m.where(baseKey(key)))
			}
			continue
		}
		t, err := template.New(key).Option("missingkey=error").Funcs(funcs(env)).Parse(string(e))
		if err != nil {
			return nil, fmt.Errorf("%s: template: %s", m.where(baseKey(key)), strings.TrimPrefix(err.Error(), "template: "))
		}
		for _, d := range t.Templates() {
			printsData(d.Tree.Root)
		}
		c.tmpl[e] = t
	}
	return c, nil
}

// printFunc is the function every printing action of a template ends in:
// text/template would print a number with %v (1.500001e+06) and a null as
// "<no value>".
const printFunc = "_print"

// printsData makes every action under n that prints (not {{$x := ...}})
// pipe its value through printFunc, with the action's source for errors:
// {{.n}} runs as {{.n | _print "{{.n}}"}}.
func printsData(n parse.Node) {
	switch x := n.(type) {
	case *parse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			printsData(c)
		}
	case *parse.ActionNode:
		if len(x.Pipe.Decl) > 0 {
			return
		}
		src := x.Pipe.String()
		x.Pipe.Cmds = append(x.Pipe.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: x.Pos, Args: []parse.Node{
			parse.NewIdentifier(printFunc).SetPos(x.Pos),
			&parse.StringNode{NodeType: parse.NodeString, Pos: x.Pos, Quoted: strconv.Quote(src), Text: src},
		}})
	case *parse.IfNode:
		printsData(x.List)
		printsData(x.ElseList)
	case *parse.RangeNode:
		printsData(x.List)
		printsData(x.ElseList)
	case *parse.WithNode:
		printsData(x.List)
		printsData(x.ElseList)
	}
}

// printValue is printFunc: a value as Text prints it; a null is an error
// naming the action, since printing it as empty (or "<no value>") would
// put a prompt together from a row that lacks what it should hold.
func printValue(src string, v any) (string, error) {
	if v == nil {
		return "", nullError(src)
	}
	return Text(v), nil
}

// nullError is the pipeline of a template action that printed a null.
type nullError string

func (e nullError) Error() string {
	return fmt.Sprintf("{{%s}} is null in this row; {{%s | default \"TEXT\"}} prints TEXT instead", string(e), string(e))
}

func baseKey(key string) string { k, _, _ := strings.Cut(key, "["); return k }

// Mapping returns the compiled mapping.
func (c *Compiled) Mapping() Mapping { return c.m }

func funcs(env Env) template.FuncMap {
	fm := builtinFuncs(env)
	for k, f := range env.Funcs {
		if _, taken := fm[k]; !taken {
			fm[k] = f
		}
	}
	return fm
}

func builtinFuncs(env Env) template.FuncMap {
	return template.FuncMap{
		// opt reads a column path, "" when it is missing.
		"opt": func(row map[string]any, path string) any {
			v, ok := lookup(row, path)
			if !ok || v == nil {
				return ""
			}
			return v
		},
		// default D V is V, or D when V is null: {{.note | default ""}}.
		"default": func(d, v any) any {
			if v == nil {
				return d
			}
			return v
		},
		printFunc:     printValue,
		"datasetLang": func() string { return env.Lang },
		// indexOf V S... is the 0-based position of the text of V among
		// the S (lm-eval's ['1', '2', '3', '4'].index(col)).
		"indexOf": func(v any, opts ...string) (int, error) {
			s := Text(v)
			if i := slices.Index(opts, s); i >= 0 {
				return i, nil
			}
			return 0, fmt.Errorf("%q is none of %q", s, opts)
		},
		// text is a value as text: whole numbers without an exponent.
		"text": Text,
		// letter is the option letter of a 0-based index.
		"letter": func(i int) string { return string(rune('A' + i)) },
		"join": func(sep string, v any) string {
			list, _ := v.([]any)
			parts := make([]string, len(list))
			for i, e := range list {
				parts[i] = Text(e)
			}
			return strings.Join(parts, sep)
		},
		// replace S OLD NEW replaces every OLD in S (a prompt file's own
		// "{text}" placeholder, for instance).
		"replace": func(s, old, new string) string { return strings.ReplaceAll(s, old, new) },
		"trim":    strings.TrimSpace,
		"lower":   strings.ToLower,
		"upper":   strings.ToUpper,
	}
}

// lookup reads a column path: the whole path as a column first, else its
// dot-separated parts (a number indexes a list).
func lookup(row map[string]any, path string) (any, bool) {
	if v, ok := row[path]; ok {
		return v, true
	}
	var cur any = row
	for _, part := range strings.Split(path, ".") {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[part]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Text renders a value as text: strings as they are, numbers as the
// shortest decimal that reads back as the same number (1500001, 0.1,
// 0.000001; an exponent only from 1e21 and below 1e-6, as JSON writers do),
// lists and records as JSON, null as "".
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []any, map[string]any:
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(x); err == nil {
			return strings.TrimSuffix(b.String(), "\n")
		}
	}
	return fmt.Sprint(v)
}

var missingKeyRE = regexp.MustCompile(`map has no entry for key "([^"]*)"`)

// Value evaluates the expression for key (a mapping key such as "question"
// or "choices[2]") on a row: a column's value as stored, a template's
// output as a string. A missing column is an error naming it, and so is
// text that is not valid UTF-8 or holds a NUL byte (checkText); ok is false
// when key is not set.
func (c *Compiled) Value(key string, row Row) (v any, ok bool, err error) {
	e, set := c.exprs[key]
	if !set {
		return nil, false, nil
	}
	if t := c.tmpl[e]; t != nil {
		var b strings.Builder
		if err := t.Execute(&b, row.Fields); err != nil {
			var null nullError
			if errors.As(err, &null) {
				return nil, true, fmt.Errorf("fields.%s: %w", key, null)
			}
			if m := missingKeyRE.FindStringSubmatch(err.Error()); m != nil {
				return nil, true, fmt.Errorf("field %s: missing (read by the template of fields.%s)", m[1], key)
			}
			return nil, true, fmt.Errorf("fields.%s: template: %s", key, strings.TrimPrefix(err.Error(), "template: "))
		}
		if err := checkText(b.String()); err != nil {
			return nil, true, fmt.Errorf("fields.%s: the template's text has %w", key, err)
		}
		return b.String(), true, nil
	}
	path, optional := strings.CutSuffix(string(e), "?")
	v, found := lookup(row.Fields, path)
	if !found {
		if optional {
			return nil, true, nil
		}
		return nil, true, fmt.Errorf("field %s: missing (fields.%s)", path, key)
	}
	if err := checkValue(v); err != nil {
		return nil, true, fmt.Errorf("field %s: %w (fields.%s)", path, err, key)
	}
	return v, true, nil
}

// String is Value as text; a column holding a list or a record is an error.
func (c *Compiled) String(key string, row Row) (string, bool, error) {
	v, ok, err := c.Value(key, row)
	if err != nil || !ok {
		return "", ok, err
	}
	switch v.(type) {
	case map[string]any, []any:
		return "", true, fmt.Errorf("field %s: want a text, got a %s (fields.%s)", c.exprs[key], kindOf(v), key)
	}
	return Text(v), true, nil
}

// Text is String for a value that must be text: a column holding a
// number, a list or a record is an error (a template's output is text).
func (c *Compiled) Text(key string, row Row) (string, bool, error) {
	v, ok, err := c.Value(key, row)
	if err != nil || !ok || v == nil {
		return "", ok, err
	}
	s, isText := v.(string)
	if !isText {
		return "", true, fmt.Errorf("field %s: want a string, got %s (fields.%s)", strings.TrimSuffix(string(c.exprs[key]), "?"), describe(v), key)
	}
	return s, true, nil
}

func describe(v any) string {
	switch v.(type) {
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "a record"
	}
	return fmt.Sprintf("%T", v)
}

// Strings reads a list: a column holding a list, or a text that is a
// one-element list.
func (c *Compiled) Strings(key string, row Row) ([]string, bool, error) {
	v, ok, err := c.Value(key, row)
	if err != nil || !ok || v == nil {
		return nil, ok, err
	}
	switch x := v.(type) {
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			if _, nested := e.([]any); nested {
				return nil, true, fmt.Errorf("field %s[%d]: want a text, got a list (fields.%s)", c.exprs[key], i, key)
			}
			out[i] = Text(e)
		}
		return out, true, nil
	case map[string]any:
		return nil, true, fmt.Errorf("field %s: want a list, got a record (fields.%s)", c.exprs[key], key)
	}
	return []string{Text(v)}, true, nil
}

func kindOf(v any) string {
	if _, ok := v.([]any); ok {
		return "list"
	}
	return "record"
}

// Columns lists the top-level columns each expression reads (templates:
// the fields they name outside range and with blocks), by key.
func (c *Compiled) Columns() map[string][]string {
	out := map[string][]string{}
	for key, e := range c.exprs {
		if t := c.tmpl[e]; t != nil {
			var cols []string
			walk(t.Tree.Root, &cols)
			out[key] = cols
			continue
		}
		path, optional := strings.CutSuffix(string(e), "?")
		if !optional {
			out[key] = []string{path}
		}
	}
	return out
}

func walk(n parse.Node, cols *[]string) {
	switch x := n.(type) {
	case *parse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			walk(c, cols)
		}
	case *parse.ActionNode:
		walk(x.Pipe, cols)
	case *parse.PipeNode:
		if x == nil {
			return
		}
		for _, c := range x.Cmds {
			for _, a := range c.Args {
				walk(a, cols)
			}
		}
	case *parse.FieldNode:
		*cols = append(*cols, x.Ident[0])
	case *parse.IfNode:
		walk(x.Pipe, cols)
		walk(x.List, cols)
		walk(x.ElseList, cols)
	case *parse.RangeNode:
		walk(x.Pipe, cols) // inside, dot is an element
	case *parse.WithNode:
		walk(x.Pipe, cols)
	}
}

// CheckColumns checks, against the columns a CSV, TSV or Parquet file
// declares, that every column the mapping reads exists: the error names
// the file, the header line, the mapping key and the column.
func (c *Compiled) CheckColumns(path string, cols Columns) error {
	have := map[string]bool{}
	for _, n := range cols.Names {
		have[n] = true
	}
	keys := make([]string, 0, len(c.exprs))
	for k := range c.exprs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	need := c.Columns()
	for _, key := range keys {
		for _, col := range need[key] {
			if have[col] {
				continue
			}
			first, _, _ := strings.Cut(col, ".")
			if have[first] {
				continue
			}
			where := fmt.Sprintf("%s:%d", path, cols.Line)
			if cols.Line == 0 {
				where = path + ": schema"
			}
			return fmt.Errorf("%s: fields.%s reads column %q, which the file does not have (columns: %s)", where, key, col, strings.Join(cols.Names, ", "))
		}
	}
	return nil
}

// Where names what key reads, for an error about its value: "field COLUMN"
// for a column, "fields.KEY" for a template.
func (c *Compiled) Where(key string) string {
	e := c.exprs[key]
	if e.IsTemplate() {
		return "fields." + key
	}
	return "field " + strings.TrimSuffix(string(e), "?")
}
