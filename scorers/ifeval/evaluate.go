package ifeval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/scorers/dataset"
)

// Dialects of prompt files.
const (
	DialectIFEval = "ifeval"     // google-research input_data.jsonl
	DialectSEA    = "sea_ifeval" // SEA-HELM's SEA-IFEval
)

// Prompt is one IFEval prompt with its verifiable instructions.
type Prompt struct {
	Key            string           `json:"key"`  // "1000" for IFEval, the row id for SEA-IFEval
	Line           int              `json:"line"` // 1-based line in the prompt file
	Text           string           `json:"prompt"`
	Lang           string           `json:"lang"`
	Dialect        string           `json:"dialect"`
	InstructionIDs []string         `json:"instruction_id_list"`
	Kwargs         []map[string]any `json:"kwargs"`
	Source         string           `json:"source,omitempty"`   // pooling tag; default the dataset
	Register       string           `json:"register,omitempty"` // HIGH | MID | LOW, when the row states it
}

// Checkers builds the prompt's checkers; errors name the line, key and id.
func (p Prompt) Checkers() ([]Checker, error) {
	if len(p.Kwargs) != len(p.InstructionIDs) {
		return nil, fmt.Errorf("line %d: key %s: %d instruction ids but %d kwargs", p.Line, p.Key, len(p.InstructionIDs), len(p.Kwargs))
	}
	if len(p.InstructionIDs) == 0 {
		return nil, fmt.Errorf("line %d: key %s: no instructions", p.Line, p.Key)
	}
	out := make([]Checker, len(p.InstructionIDs))
	for i, id := range p.InstructionIDs {
		opt := CheckerOptions{Lang: p.Lang, SEA: p.Dialect == DialectSEA, Seed: promptSeed(p.Key, i)}
		c, err := NewChecker(id, p.Kwargs[i], opt)
		if err != nil {
			return nil, fmt.Errorf("line %d: key %s: %w", p.Line, p.Key, err)
		}
		out[i] = c
	}
	return out, nil
}

// promptSeed seeds a prompt's random choices from its key and the
// instruction's position, so they do not depend on run order.
func promptSeed(key string, i int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", key, i)
	return h.Sum64()
}

// Outcome is the verdict on one prompt.
type Outcome struct {
	Key            string   `json:"key"`
	Lang           string   `json:"lang"`
	InstructionIDs []string `json:"instruction_id_list"`
	Strict         []bool   `json:"strict"`
	Loose          []bool   `json:"loose"`
}

// FollowAllStrict and FollowAllLoose are the prompt-level verdicts.
func (o Outcome) FollowAllStrict() bool { return all(o.Strict) }
func (o Outcome) FollowAllLoose() bool  { return all(o.Loose) }

func all(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}

// Accuracy holds the four IFEval accuracies over a set of prompts.
type Accuracy struct {
	PromptStrict float64 `json:"prompt_level_strict_acc"`
	InstStrict   float64 `json:"inst_level_strict_acc"`
	PromptLoose  float64 `json:"prompt_level_loose_acc"`
	InstLoose    float64 `json:"inst_level_loose_acc"`
	Prompts      int     `json:"prompts"`
	Instructions int     `json:"instructions"`
}

// InstructionStats is the accuracy of one instruction id or category.
type InstructionStats struct {
	N      int     `json:"n"`
	Strict float64 `json:"strict_acc"`
	Loose  float64 `json:"loose_acc"`
}

// Result is the outcome of an IFEval evaluation, as evaluation_lib's
// print_report prints it, plus a per-language breakdown.
type Result struct {
	Accuracy
	// PerInstruction is keyed by instruction id ("punctuation:no_comma").
	PerInstruction map[string]InstructionStats `json:"per_instruction"`
	// PerCategory is keyed by the id's prefix ("punctuation").
	PerCategory map[string]InstructionStats `json:"per_category"`
	PerLanguage map[string]Accuracy         `json:"per_language"`
	Outcomes    []Outcome                   `json:"-"`
}

// Evaluate checks each prompt's response (responses are keyed by
// Prompt.Key) strictly and loosely, as evaluation_lib does.
func Evaluate(prompts []Prompt, responses map[string]string) (Result, error) {
	outcomes := make([]Outcome, len(prompts))
	for i, p := range prompts {
		resp, ok := responses[p.Key]
		if !ok {
			return Result{}, fmt.Errorf("line %d: key %s: no response", p.Line, p.Key)
		}
		checkers, err := p.Checkers()
		if err != nil {
			return Result{}, err
		}
		outcomes[i] = Check(p, checkers, resp)
	}
	return Summarize(outcomes), nil
}

// Check runs a prompt's checkers on a response, strictly and loosely.
func Check(p Prompt, checkers []Checker, response string) Outcome {
	o := Outcome{Key: p.Key, Lang: p.Lang, InstructionIDs: p.InstructionIDs,
		Strict: make([]bool, len(checkers)), Loose: make([]bool, len(checkers))}
	variants := looseVariants(response)
	for i, c := range checkers {
		o.Strict[i] = pyStrip(response) != "" && c.Check(response)
		if o.Strict[i] {
			o.Loose[i] = true
			continue
		}
		for _, v := range variants[1:] {
			if pyStrip(v) != "" && c.Check(v) {
				o.Loose[i] = true
				break
			}
		}
	}
	return o
}

// looseVariants are test_instruction_following_loose's eight responses: as
// is, without the first line, without the last, without both, each also
// with every "*" removed. The first is the response itself.
func looseVariants(r string) [8]string {
	lines := strings.Split(r, "\n")
	join := func(ls []string) string { return pyStrip(strings.Join(ls, "\n")) }
	first := join(lines[1:])
	last := join(lines[:len(lines)-1])
	both := ""
	if len(lines) > 2 {
		both = join(lines[1 : len(lines)-1])
	}
	star := func(s string) string { return strings.ReplaceAll(s, "*", "") }
	return [8]string{r, star(r), first, last, both, star(first), star(last), star(both)}
}

// Summarize computes the accuracies of a set of outcomes.
func Summarize(outcomes []Outcome) Result {
	var s Summarizer
	for _, o := range outcomes {
		s.Add(o)
	}
	res := s.Result()
	res.Outcomes = outcomes
	return res
}

// Summarizer computes Summarize's result one outcome at a time, so that an
// evaluation too large to hold its outcomes can still be summarised. It keeps
// only integer counts, and every accuracy is one division of two of them, so
// the result does not depend on how the outcomes were batched. The zero value
// is ready to use.
type Summarizer struct {
	all     accuracyCounts
	perID   map[string]*instructionCounts
	perCat  map[string]*instructionCounts
	perLang map[string]*accuracyCounts
}

// Add counts one outcome. New table keys are copied, so the summariser
// keeps no reference into the outcome or the data it was decoded from.
func (s *Summarizer) Add(o Outcome) {
	if s.perID == nil {
		s.perID = map[string]*instructionCounts{}
		s.perCat = map[string]*instructionCounts{}
		s.perLang = map[string]*accuracyCounts{}
	}
	s.all.add(o)
	lang := s.perLang[o.Lang]
	if lang == nil {
		lang = &accuracyCounts{}
		s.perLang[strings.Clone(o.Lang)] = lang
	}
	lang.add(o)
	for i, id := range o.InstructionIDs {
		cat, _, _ := strings.Cut(id, ":")
		countInstruction(s.perID, id, o.Strict[i], o.Loose[i])
		countInstruction(s.perCat, cat, o.Strict[i], o.Loose[i])
	}
}

// Result is the summary of every outcome added so far; its Outcomes are nil.
func (s *Summarizer) Result() Result {
	res := Result{
		Accuracy:       s.all.accuracy(),
		PerInstruction: make(map[string]InstructionStats, len(s.perID)),
		PerCategory:    make(map[string]InstructionStats, len(s.perCat)),
		PerLanguage:    make(map[string]Accuracy, len(s.perLang)),
	}
	for id, c := range s.perID {
		res.PerInstruction[id] = c.stats()
	}
	for cat, c := range s.perCat {
		res.PerCategory[cat] = c.stats()
	}
	for lang, c := range s.perLang {
		res.PerLanguage[lang] = c.accuracy()
	}
	return res
}

// instructionCounts are the verdicts on one instruction id or category.
type instructionCounts struct{ n, strict, loose int }

func countInstruction(m map[string]*instructionCounts, key string, strict, loose bool) {
	c := m[key]
	if c == nil {
		c = &instructionCounts{}
		m[strings.Clone(key)] = c
	}
	c.n++
	if strict {
		c.strict++
	}
	if loose {
		c.loose++
	}
}

func (c instructionCounts) stats() InstructionStats {
	return InstructionStats{c.n, float64(c.strict) / float64(c.n), float64(c.loose) / float64(c.n)}
}

// accuracyCounts are the prompt- and instruction-level verdicts behind an Accuracy.
type accuracyCounts struct {
	prompts, instructions     int
	promptStrict, promptLoose int
	instStrict, instLoose     int
}

func (c *accuracyCounts) add(o Outcome) {
	c.prompts++
	c.instructions += len(o.Strict)
	if o.FollowAllStrict() {
		c.promptStrict++
	}
	if o.FollowAllLoose() {
		c.promptLoose++
	}
	for i := range o.Strict {
		if o.Strict[i] {
			c.instStrict++
		}
		if o.Loose[i] {
			c.instLoose++
		}
	}
}

func (c accuracyCounts) accuracy() Accuracy {
	a := Accuracy{Prompts: c.prompts, Instructions: c.instructions}
	if c.prompts > 0 {
		a.PromptStrict = float64(c.promptStrict) / float64(c.prompts)
		a.PromptLoose = float64(c.promptLoose) / float64(c.prompts)
	}
	if c.instructions > 0 {
		a.InstStrict = float64(c.instStrict) / float64(c.instructions)
		a.InstLoose = float64(c.instLoose) / float64(c.instructions)
	}
	return a
}

// SortedIDs returns the keys of a per-instruction or per-category table in order.
func SortedIDs(m map[string]InstructionStats) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// ReadPrompts reads a prompt file (local, s3:// or hf://, plain or
// compressed; JSONL, CSV, TSV or Parquet): IFEval's input_data.jsonl
// (DialectIFEval, lang defaults to "en") or SEA-IFEval rows (DialectSEA,
// lang keeps that language's rows). Every prompt's checkers are built, so
// a bad instruction is reported here, with the file, line, key and id.
func ReadPrompts(path, dialect, lang string) ([]Prompt, error) {
	pr, c, err := compilePreset(dialect, nil, lang)
	if err != nil {
		return nil, err
	}
	src := dataset.Source{URI: path}
	each := func(header func(dataset.Columns) error, fn func(dataset.Row) error) error {
		return dataset.Each(context.Background(), src, header, fn)
	}
	return readPrompts(each, path, c, pr, lang, 0, nil)
}

// ParsePrompts is ReadPrompts on a JSONL stream.
func ParsePrompts(r io.Reader, dialect, lang string) ([]Prompt, error) {
	pr, c, err := compilePreset(dialect, nil, lang)
	if err != nil {
		return nil, err
	}
	each := func(header func(dataset.Columns) error, fn func(dataset.Row) error) error {
		return dataset.EachIn("input", dataset.FileJSONL, r, header, fn)
	}
	return readPrompts(each, "input", c, pr, lang, 0, nil)
}

// seaKwargAliases maps SEA-IFEval's kwarg names to IFEval's.
var seaKwargAliases = map[string]string{
	"section_title":     "section_spliter",
	"response_language": "language",
}

// preset is a built-in prompt format as a mapping of the declarative
// mechanism (dataset.Kinds "if"), with what a mapping does not say.
type preset struct {
	dialect string
	fields  dataset.Mapping
	// aliases rename the format's kwargs to IFEval's.
	aliases map[string]string
	// langKeeps: the dataset's lang keeps that language's rows, instead
	// of labelling them.
	langKeeps bool
}

// Presets are the built-in prompt formats by name (DatasetConfig.Format);
// a dataset's fields replace a preset's entries of the same name.
var presets = map[string]preset{
	DialectIFEval: {dialect: DialectIFEval, fields: dataset.Mapping{
		ID: "key", Prompt: "prompt", InstructionIDs: "instruction_id_list", Kwargs: "kwargs?", Lang: `{{or datasetLang "en"}}`,
	}},
	// SEA-IFEval: one prompt text in prompts[0], set into the row's own
	// prompt template; one instruction, named by metadata.subcategory.
	DialectSEA: {dialect: DialectSEA, aliases: seaKwargAliases, langKeeps: true, fields: dataset.Mapping{
		ID:             "id",
		Prompt:         `{{$t := text (index .prompts 0 "text")}}{{with opt . "prompt_templates.0"}}{{replace . "{text}" $t}}{{else}}{{$t}}{{end}}`,
		Lang:           "metadata.language",
		InstructionIDs: "metadata.subcategory",
		Kwargs:         "kwargs?",
	}},
}

// compilePreset is the mapping a dataset reads: its format's preset with
// its own fields over it, or its fields alone (format "if" or none:
// IFEval's rules).
func compilePreset(format string, fields *dataset.Mapping, lang string) (preset, *dataset.Compiled, error) {
	pr, ok := presets[format]
	switch {
	case ok:
	case (format == "" || format == "if") && fields != nil:
		pr = preset{dialect: DialectIFEval, fields: dataset.Mapping{Lang: `{{or datasetLang "en"}}`}}
	case format == "" || format == "if":
		return pr, nil, fmt.Errorf("format %s needs fields", "if")
	default:
		return pr, nil, fmt.Errorf("unknown prompt format %q (want %q, %q, or if with fields)", format, DialectIFEval, DialectSEA)
	}
	m := pr.fields
	if fields != nil {
		m = dataset.Merge(m, *fields)
	}
	c, err := m.Compile("if", dataset.Env{Lang: lang})
	return pr, c, err
}

// readPrompts reads the rows each yields through c: every prompt's
// instructions are checked and its key is unique in the file; rows of
// another language are dropped when the preset's lang keeps one; keep
// (when set) drops prompts, and the read stops after limit kept (0: all).
func readPrompts(each func(func(dataset.Columns) error, func(dataset.Row) error) error, path string, c *dataset.Compiled, pr preset, lang string, limit int, keep func(Prompt) bool) ([]Prompt, error) {
	var out []Prompt
	seen := map[string]int{}
	stop := errors.New("limit")
	header := func(cols dataset.Columns) error { return c.CheckColumns(path, cols) }
	err := each(header, func(r dataset.Row) error {
		p, err := promptFromRow(c, r, pr)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, r.Line, err)
		}
		if prev, dup := seen[p.Key]; dup {
			return fmt.Errorf("%s:%d: key %s already used on line %d", path, r.Line, p.Key, prev)
		}
		seen[p.Key] = r.Line
		if _, err := p.Checkers(); err != nil {
			msg, _ := strings.CutPrefix(err.Error(), fmt.Sprintf("line %d: ", r.Line))
			return fmt.Errorf("%s:%d: %s", path, r.Line, msg)
		}
		if pr.langKeeps && lang != "" && p.Lang != lang {
			return nil
		}
		if keep != nil && !keep(p) {
			return nil
		}
		if out = append(out, p); limit > 0 && len(out) == limit {
			return stop
		}
		return nil
	})
	if err == stop {
		err = nil
	}
	return out, err
}

// promptFromRow reads one prompt: key (default the line), text, lang,
// instruction ids, their kwargs (a list of records, one per instruction),
// pooling source and register.
func promptFromRow(c *dataset.Compiled, r dataset.Row, pr preset) (Prompt, error) {
	p := Prompt{Line: r.Line, Dialect: pr.dialect}
	for _, f := range []struct {
		key string
		dst *string
	}{{"id", &p.Key}, {"lang", &p.Lang}, {"source", &p.Source}, {"register", &p.Register}} {
		var err error
		if *f.dst, _, err = c.String(f.key, r); err != nil {
			return p, err
		}
	}
	var err error
	if p.Text, _, err = c.Text("prompt", r); err != nil {
		return p, err
	}
	if dataset.Blank(p.Text) {
		return p, fmt.Errorf("%s: empty prompt", c.Where("prompt"))
	}
	if p.Key == "" {
		p.Key = strconv.Itoa(r.Line)
	}
	m := c.Mapping()
	switch p.Register {
	case "", "HIGH", "MID", "LOW":
	default:
		return p, fmt.Errorf("field %s: register must be HIGH, MID or LOW, got %q", m.Register, p.Register)
	}
	// A text column or template may hold the lists as JSON (a CSV file's
	// instruction_id_list and kwargs columns).
	ids, _, err := c.Value("instruction_ids", r)
	if err != nil {
		return p, err
	}
	if s, isText := ids.(string); isText && strings.HasPrefix(strings.TrimSpace(s), "[") {
		var list []string
		if err := json.Unmarshal([]byte(s), &list); err != nil {
			return p, fmt.Errorf("field %s: not a JSON list of instruction ids: %v", strings.TrimSuffix(string(m.InstructionIDs), "?"), err)
		}
		p.InstructionIDs = list
	} else if p.InstructionIDs, _, err = c.Strings("instruction_ids", r); err != nil {
		return p, err
	}
	v, _, err := c.Value("kwargs", r)
	if err != nil {
		return p, err
	}
	if s, isText := v.(string); isText {
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return p, fmt.Errorf("field %s: not a JSON list of records: %v", strings.TrimSuffix(string(m.Kwargs), "?"), err)
		}
	}
	switch x := v.(type) {
	case nil:
	case []any:
		p.Kwargs = make([]map[string]any, len(x))
		for i, e := range x {
			switch kw := e.(type) {
			case nil:
			case map[string]any:
				for from, to := range pr.aliases {
					if v, ok := kw[from]; ok {
						delete(kw, from)
						kw[to] = v
					}
				}
				p.Kwargs[i] = kw
			default:
				return p, fmt.Errorf("field %s[%d]: want a record of kwargs, got %v", strings.TrimSuffix(string(m.Kwargs), "?"), i, e)
			}
		}
	default:
		return p, fmt.Errorf("field %s: want a list of records (one per instruction), got %v", strings.TrimSuffix(string(m.Kwargs), "?"), v)
	}
	return p, nil
}

func eachLine(r io.Reader, f func(line int, b []byte) error) error {
	return dataset.EachLine(r, "", f)
}

// ResponseLine is one line of a response file in the official format.
type ResponseLine struct {
	Line     int
	Prompt   string
	Response string
}

// ReadResponses reads {"prompt", "response"} lines.
func ReadResponses(path string) ([]ResponseLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := ParseResponses(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// ParseResponses is ReadResponses on a reader.
func ParseResponses(r io.Reader) ([]ResponseLine, error) {
	var out []ResponseLine
	err := eachLine(r, func(line int, b []byte) error {
		var raw struct {
			Prompt   *string `json:"prompt"`
			Response *string `json:"response"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return fmt.Errorf("line %d: invalid JSON: %w", line, err)
		}
		if raw.Prompt == nil || raw.Response == nil {
			return fmt.Errorf("line %d: want fields \"prompt\" and \"response\"", line)
		}
		out = append(out, ResponseLine{line, *raw.Prompt, *raw.Response})
		return nil
	})
	return out, err
}

// MatchResponses pairs responses with prompts by prompt text, as the
// official evaluation does, and returns them keyed by Prompt.Key. A prompt
// without a response and a response whose prompt is unknown are errors.
func MatchResponses(prompts []Prompt, lines []ResponseLine) (map[string]string, error) {
	byText := make(map[string]ResponseLine, len(lines))
	for _, l := range lines {
		byText[l.Prompt] = l
	}
	known := make(map[string]bool, len(prompts))
	out := make(map[string]string, len(prompts))
	for _, p := range prompts {
		known[p.Text] = true
		l, ok := byText[p.Text]
		if !ok {
			return nil, fmt.Errorf("prompt line %d: key %s: no response with this prompt text (%s)", p.Line, p.Key, abbreviate(p.Text))
		}
		out[p.Key] = l.Response
	}
	for _, l := range lines {
		if !known[l.Prompt] {
			return nil, fmt.Errorf("response line %d: prompt matches no input prompt (%s)", l.Line, abbreviate(l.Prompt))
		}
	}
	return out, nil
}

func abbreviate(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return strconv.Quote(s)
}

// ScoreFiles scores the responses file against the prompts file (read in
// dialect and lang, as ReadPrompts takes them), as IFEval's
// evaluation_main does with its two files.
func ScoreFiles(promptsPath, responsesPath, dialect, lang string) (Result, error) {
	prompts, err := ReadPrompts(promptsPath, dialect, lang)
	if err != nil {
		return Result{}, err
	}
	lines, err := ReadResponses(responsesPath)
	if err != nil {
		return Result{}, err
	}
	byKey, err := MatchResponses(prompts, lines)
	if err != nil {
		return Result{}, fmt.Errorf("%s vs %s: %w", responsesPath, promptsPath, err)
	}
	return Evaluate(prompts, byKey)
}
