package mcq

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
)

// Presets are the built-in dataset formats, as mappings (DatasetConfig.Format
// names one; DatasetConfig.Fields refines it or, alone, declares a dataset).
var Presets = map[string]dataset.Mapping{
	// Global-MMLU (CohereForAI/Global-MMLU): question, A-D, answer letter;
	// the subject is the pooling source.
	"global_mmlu": {
		ID: "sample_id?", Question: "question", Choices: dataset.Choices{Each: []dataset.Expr{"A", "B", "C", "D"}},
		Answer: "answer", Source: "subject?", Lang: `{{"ms"}}`,
	},
	// SEA-HELM's Belebele rows: prompts[0] holds passage, question and choice1-4.
	"belebele": {
		ID: "id?", Passage: "prompts.0.text", Question: "prompts.0.question",
		Choices: dataset.Choices{Each: []dataset.Expr{"prompts.0.choice1", "prompts.0.choice2", "prompts.0.choice3", "prompts.0.choice4"}},
		Answer:  "label", Lang: "metadata.language?",
	},
	// SEA-HELM's IndoNLI rows, with its template's options: A entailment,
	// B contradiction, C neutral, stated in the item's language.
	"indonli": {
		Premise: "prompts.0.sentence1", Hypothesis: "prompts.0.sentence2", Answer: "label",
		Labels: []string{"entailment", "contradiction", "neutral"},
		ChoiceTexts: map[string][]string{
			"id": {"Jika KALIMAT_1 benar, maka KALIMAT_2 juga harus benar.", "KALIMAT_1 bertentangan dengan KALIMAT_2.", "Jika KALIMAT_1 benar, KALIMAT_2 mungkin benar atau mungkin tidak benar."},
			"ms": {"Jika AYAT_1 benar, maka AYAT_2 juga mesti benar.", "AYAT_1 bercanggah dengan AYAT_2.", "Jika AYAT_1 benar, AYAT_2 mungkin benar atau mungkin tidak benar."},
			"*":  {"If SENTENCE_1 is true, then SENTENCE_2 must also be true.", "SENTENCE_1 contradicts SENTENCE_2.", "If SENTENCE_1 is true, SENTENCE_2 may or may not be true."},
		},
		Lang: `{{or datasetLang (opt . "metadata.language") "id"}}`,
	},
	// SEA-HELM's KALAHI rows: the options are lettered lines of prompts[0].mcq.
	"kalahi": {
		ID: "id?", Question: "prompts.0.question", ChoicesText: "prompts.0.mcq", Answer: "label", Lang: `{{"tl"}}`,
	},
}

// Formats lists the dataset formats the MCQ axes read.
func Formats() []string {
	out := make([]string, 0, len(Presets))
	for k := range Presets {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// MappingFor is the mapping a dataset declares: its format's preset, with
// its own fields laid over it. Every error names the field.
func MappingFor(d scorers.DatasetConfig) (dataset.Mapping, error) {
	var m dataset.Mapping
	if d.Format != "" && d.Format != "mcq" {
		p, ok := Presets[d.Format]
		if !ok {
			return m, fmt.Errorf("dataset %s: unknown format %q (known: %s, or mcq with fields)", d.Name, d.Format, strings.Join(Formats(), ", "))
		}
		m = p
	} else if d.Fields == nil {
		return m, fmt.Errorf("dataset %s: format mcq needs fields", d.Name)
	}
	if d.Fields != nil {
		m = dataset.Merge(m, *d.Fields)
	}
	if err := m.Check("mcq"); err != nil {
		return m, fmt.Errorf("dataset %s: %w", d.Name, err)
	}
	return m, nil
}

// LoadDataset reads one dataset file. Every error names the file, the line
// and the field.
func LoadDataset(axis string, d scorers.DatasetConfig, baseDir string) ([]scorers.Item, error) {
	var items []scorers.Item
	err := EachInDataset(axis, d, baseDir, func(it scorers.Item) error {
		items = append(items, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// errStop ends a read at the dataset's limit.
var errStop = fmt.Errorf("limit reached")

// EachInDataset reads one dataset file like LoadDataset, a row at a time,
// calling fn with each item; an error from fn stops the read and is returned
// as it is.
func EachInDataset(axis string, d scorers.DatasetConfig, baseDir string, fn func(scorers.Item) error) error {
	m, err := MappingFor(d)
	if err != nil {
		return err
	}
	c, err := m.Compile("mcq", dataset.Env{Lang: d.Lang})
	if err != nil {
		return fmt.Errorf("dataset %s: %w", d.Name, err)
	}
	src := d.Source(baseDir)
	path := src.Path()
	name := d.Name
	if name == "" {
		name = src.Name()
	}
	prefix, err := fewshotPrefix(d, baseDir, c)
	if err != nil {
		return err
	}
	header := func(cols dataset.Columns) error { return c.CheckColumns(path, cols) }
	n := 0
	err = dataset.Each(context.Background(), src, header, func(r dataset.Row) error {
		if !matches(r.Fields, d.Filter) {
			return nil
		}
		it, extra, err := itemFromRow(c, r)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, r.Line, err)
		}
		it.Axis, it.Dataset, it.Line = axis, name, r.Line
		it.Lang = cmp.Or(it.Lang, d.Lang)
		it.Source = cmp.Or(it.Source, name)
		if it.ID == "" {
			it.ID = strconv.Itoa(r.Line)
		}
		it.ID = name + "/" + it.ID
		if m.Prompt != "" {
			if it.Prompt, _, err = c.String("prompt", r); err != nil {
				return fmt.Errorf("%s:%d: %w", path, r.Line, err)
			}
			if dataset.Blank(it.Prompt) {
				return fmt.Errorf("%s:%d: %s: empty prompt", path, r.Line, c.Where("prompt"))
			}
		} else {
			it.Prompt = render(it, extra)
		}
		it.Prompt = prefix + it.Prompt
		if err := fn(it); err != nil {
			return err
		}
		if n++; d.Limit > 0 && n == d.Limit {
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return err
	}
	if n == 0 {
		return fmt.Errorf("dataset %s (%s): no rows", name, path)
	}
	return nil
}

// fewshotPrefix renders the dataset's few-shot examples (the first n rows
// of the examples file, read with the same mapping), each followed by its
// answer letter, as the text that goes before every prompt.
func fewshotPrefix(d scorers.DatasetConfig, baseDir string, c *dataset.Compiled) (string, error) {
	if d.Fewshot == nil || d.Fewshot.N == 0 {
		return "", nil
	}
	src := d.Fewshot.Source(baseDir)
	path := src.Path()
	var b strings.Builder
	n := 0
	header := func(cols dataset.Columns) error { return c.CheckColumns(path, cols) }
	err := dataset.Each(context.Background(), src, header, func(r dataset.Row) error {
		it, _, err := itemFromRow(c, r)
		if err != nil {
			return fmt.Errorf("%s:%d: %w (few-shot example)", path, r.Line, err)
		}
		it.Lang = cmp.Or(it.Lang, d.Lang)
		p := Render(it)
		if c.Mapping().Prompt != "" {
			if p, _, err = c.String("prompt", r); err != nil {
				return fmt.Errorf("%s:%d: %w (few-shot example)", path, r.Line, err)
			}
		}
		fmt.Fprintf(&b, "%s %c\n\n", p, 'A'+it.Gold)
		if n++; n == d.Fewshot.N {
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return "", err
	}
	if n < d.Fewshot.N {
		return "", fmt.Errorf("%s: %d examples, fewshot.n asks for %d", path, n, d.Fewshot.N)
	}
	return b.String(), nil
}

func matches(row map[string]any, filter map[string]string) bool {
	for k, want := range filter {
		if fmt.Sprint(row[k]) != want {
			return false
		}
	}
	return true
}

// itemFromRow reads one row through the mapping: the item's id, source,
// lang, register, choices, gold option and label, and the texts Render
// uses (in Extra, and decoded as extra). Errors name the field.
func itemFromRow(c *dataset.Compiled, r dataset.Row) (it scorers.Item, extra map[string]string, err error) {
	m := c.Mapping()
	read := func(key string, get func(string, dataset.Row) (string, bool, error)) (string, bool) {
		if err != nil {
			return "", false
		}
		var s string
		var ok bool
		s, ok, err = get(key, r)
		return s, ok
	}
	it.ID, _ = read("id", c.String)
	it.Source, _ = read("source", c.String)
	it.Lang, _ = read("lang", c.String)
	it.Register, _ = read("register", c.String)
	extra = map[string]string{}
	for _, k := range []struct{ key, name string }{{"passage", "passage"}, {"question", "question"}, {"premise", "sentence1"}, {"hypothesis", "sentence2"}} {
		if s, ok := read(k.key, c.Text); ok {
			extra[k.name] = s
			if err == nil && k.key != "passage" && dataset.Blank(s) {
				err = fmt.Errorf("%s: empty %s", c.Where(k.key), k.key)
			}
		}
	}
	if err != nil {
		return it, extra, err
	}
	answer, _, err := c.Value("answer", r)
	if err != nil {
		return it, extra, err
	}
	switch it.Register {
	case "", "HIGH", "MID", "LOW":
	default:
		return it, extra, fmt.Errorf("field %s: register must be HIGH, MID or LOW, got %q", m.Register, it.Register)
	}
	switch {
	case len(m.Choices.Each) > 0:
		for i := range m.Choices.Each {
			s, _, err := c.Text(fmt.Sprintf("choices[%d]", i), r)
			if err != nil {
				return it, extra, err
			}
			it.Choices = append(it.Choices, s)
		}
		// Sets whose questions have up to five options leave the last
		// columns empty (or null) on questions with fewer; an empty option
		// before a given one is a damaged row.
		for len(it.Choices) > 0 && dataset.Blank(it.Choices[len(it.Choices)-1]) {
			it.Choices = it.Choices[:len(it.Choices)-1]
		}
		for i, ch := range it.Choices {
			if dataset.Blank(ch) {
				return it, extra, fmt.Errorf("%s: option %c is empty or null", c.Where(fmt.Sprintf("choices[%d]", i)), 'A'+i)
			}
		}
	case m.Choices.List != "":
		if it.Choices, _, err = c.Strings("choices", r); err != nil {
			return it, extra, err
		}
		for i, ch := range it.Choices {
			if dataset.Blank(ch) {
				return it, extra, fmt.Errorf("%s[%d]: option %c is empty or null", c.Where("choices"), i, 'A'+i)
			}
		}
	case m.ChoicesText != "":
		s, _, err := c.Text("choices_text", r)
		if err != nil {
			return it, extra, err
		}
		it.Choices = letteredLines(s)
		for i, ch := range it.Choices {
			if dataset.Blank(ch) {
				return it, extra, fmt.Errorf("%s: option %c is empty", c.Where("choices_text"), 'A'+i)
			}
		}
	default:
		texts, ok := m.ChoiceTexts[it.Lang]
		if !ok {
			texts = m.ChoiceTexts["*"]
		}
		if texts == nil {
			return it, extra, fmt.Errorf("fields.choice_texts: none for language %q and no \"*\" entry", it.Lang)
		}
		it.Choices = slices.Clone(texts)
	}
	if len(it.Choices) < 2 {
		return it, extra, fmt.Errorf("field %s: fewer than two choices", choicesField(m))
	}
	if it.Gold, it.Label, err = gold(m, answer, it.Choices); err != nil {
		return it, extra, err
	}
	it.Extra = mustJSON(extra)
	return it, extra, nil
}

func choicesField(m dataset.Mapping) string {
	switch {
	case m.ChoicesText != "":
		return string(m.ChoicesText)
	case m.Choices.List != "":
		return string(m.Choices.List)
	}
	return "choices"
}

// gold reads the gold option from the answer value as the mapping says,
// and the item's label: the label value with labels, else the letter.
func gold(m dataset.Mapping, v any, choices []string) (int, string, error) {
	field := strings.TrimSuffix(string(m.Answer), "?")
	if m.Answer.IsTemplate() {
		field = "answer (template)"
	}
	text := strings.TrimSpace(dataset.Text(v))
	if len(m.Labels) > 0 {
		i := slices.Index(m.Labels, text)
		if i < 0 {
			return 0, "", fmt.Errorf("field %s: %q is not one of %s", field, text, strings.Join(m.Labels, ", "))
		}
		if i >= len(choices) {
			return 0, "", fmt.Errorf("field %s: label %q has no option (%d choices)", field, text, len(choices))
		}
		return i, text, nil
	}
	g := -1
	switch m.AnswerAs {
	case "text":
		g = slices.Index(choices, text)
		if g < 0 {
			return 0, "", fmt.Errorf("field %s: %q is not the text of any of the %d choices", field, text, len(choices))
		}
	case "letter":
		if len(text) == 1 && text[0] >= 'A' && text[0] <= 'Z' {
			g = int(text[0] - 'A')
		} else {
			return 0, "", fmt.Errorf("field %s: want a letter A-Z, got %q", field, text)
		}
	case "index":
		n, err := strconv.Atoi(text)
		if err != nil {
			return 0, "", fmt.Errorf("field %s: want a 0-based index, got %q", field, text)
		}
		g = n
	default: // auto: a letter or a 0-based index
		switch {
		case len(text) == 1 && text[0] >= 'A' && text[0] <= 'Z':
			g = int(text[0] - 'A')
		default:
			n, err := strconv.Atoi(text)
			if err != nil {
				return 0, "", fmt.Errorf("field %s: want a letter A-Z or an index, got %v", field, v)
			}
			g = n
		}
	}
	if g < 0 || g >= len(choices) {
		return 0, "", fmt.Errorf("field %s: answer %q is outside the %d choices (A-%c)", field, text, len(choices), 'A'+len(choices)-1)
	}
	return g, string(rune('A' + g)), nil
}

// letteredLines splits "A: ...\nB: ..." (or "A. ", "A) ") into options; a
// line that does not start the next letter continues the option above, and
// text before option A is dropped.
func letteredLines(s string) []string {
	var out []string
	for _, ln := range strings.Split(s, "\n") {
		if len(ln) >= 3 && ln[0] == byte('A'+len(out)) && (ln[1] == ':' || ln[1] == '.' || ln[1] == ')') {
			out = append(out, strings.TrimSpace(ln[2:]))
		} else if n := len(out); n > 0 {
			out[n-1] += "\n" + ln
		}
	}
	return out
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return b
}
