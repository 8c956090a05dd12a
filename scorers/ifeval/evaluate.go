package ifeval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
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

// ReadPrompts reads a prompt file: IFEval's input_data.jsonl
// (DialectIFEval, lang defaults to "en") or SEA-IFEval rows (DialectSEA).
// Every prompt's checkers are built, so a bad instruction is reported here,
// with the file, line, key and id.
func ReadPrompts(path, dialect, lang string) ([]Prompt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ps, err := ParsePrompts(f, dialect, lang)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ps, nil
}

// ParsePrompts is ReadPrompts on a reader.
func ParsePrompts(r io.Reader, dialect, lang string) ([]Prompt, error) {
	var out []Prompt
	seen := map[string]int{}
	err := eachLine(r, func(line int, b []byte) error {
		var p Prompt
		var err error
		switch dialect {
		case DialectIFEval:
			p, err = parseIFEvalLine(b, lang)
		case DialectSEA:
			p, err = parseSEALine(b)
		default:
			return fmt.Errorf("unknown prompt format %q (want %q or %q)", dialect, DialectIFEval, DialectSEA)
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		p.Line, p.Dialect = line, dialect
		if prev, dup := seen[p.Key]; dup {
			return fmt.Errorf("line %d: key %s already used on line %d", line, p.Key, prev)
		}
		seen[p.Key] = line
		if _, err := p.Checkers(); err != nil {
			return err
		}
		if lang != "" && p.Lang != lang {
			return nil
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

func eachLine(r io.Reader, f func(line int, b []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := f(line, b); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", line+1, err)
	}
	return nil
}

func parseIFEvalLine(b []byte, lang string) (Prompt, error) {
	var raw struct {
		Key    json.RawMessage  `json:"key"`
		Prompt *string          `json:"prompt"`
		IDs    []string         `json:"instruction_id_list"`
		Kwargs []map[string]any `json:"kwargs"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Prompt{}, fmt.Errorf("invalid JSON: %w", err)
	}
	key := strings.Trim(string(raw.Key), `"`)
	if key == "" {
		return Prompt{}, errors.New(`missing field "key"`)
	}
	if raw.Prompt == nil {
		return Prompt{}, fmt.Errorf("key %s: missing field \"prompt\"", key)
	}
	if raw.IDs == nil {
		return Prompt{}, fmt.Errorf("key %s: missing field \"instruction_id_list\"", key)
	}
	if lang == "" {
		lang = "en"
	}
	return Prompt{Key: key, Text: *raw.Prompt, Lang: lang, InstructionIDs: raw.IDs, Kwargs: raw.Kwargs}, nil
}

// seaKwargAliases maps SEA-IFEval's kwarg names to IFEval's.
var seaKwargAliases = map[string]string{
	"section_title":     "section_spliter",
	"response_language": "language",
}

func parseSEALine(b []byte) (Prompt, error) {
	var raw struct {
		ID      json.RawMessage `json:"id"`
		Prompts []struct {
			Text string `json:"text"`
		} `json:"prompts"`
		Templates []string `json:"prompt_templates"`
		Metadata  struct {
			Language    string `json:"language"`
			Subcategory string `json:"subcategory"`
		} `json:"metadata"`
		Kwargs []map[string]any `json:"kwargs"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Prompt{}, fmt.Errorf("invalid JSON: %w", err)
	}
	key := strings.Trim(string(raw.ID), `"`)
	switch {
	case key == "":
		return Prompt{}, errors.New(`missing field "id"`)
	case len(raw.Prompts) != 1:
		return Prompt{}, fmt.Errorf("id %s: want 1 entry in \"prompts\", got %d", key, len(raw.Prompts))
	case raw.Metadata.Language == "":
		return Prompt{}, fmt.Errorf("id %s: missing field \"metadata.language\"", key)
	case raw.Metadata.Subcategory == "":
		return Prompt{}, fmt.Errorf("id %s: missing field \"metadata.subcategory\"", key)
	}
	text := raw.Prompts[0].Text
	if len(raw.Templates) > 0 {
		text = strings.ReplaceAll(raw.Templates[0], "{text}", text)
	}
	for _, kw := range raw.Kwargs {
		for from, to := range seaKwargAliases {
			if v, ok := kw[from]; ok {
				delete(kw, from)
				kw[to] = v
			}
		}
	}
	return Prompt{Key: key, Text: text, Lang: raw.Metadata.Language,
		InstructionIDs: []string{raw.Metadata.Subcategory}, Kwargs: raw.Kwargs}, nil
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
