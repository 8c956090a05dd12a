package nlg

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
)

// Dataset formats (DatasetConfig.Format).
const (
	// FormatPassages reads flores_passages_eng_zsm_from_belebele.jsonl:
	// {"pair_id", "eng_Latn", "zsm_Latn"} passage pairs, one item per
	// configured direction.
	FormatPassages = "flores_passages"
	// FormatSeaHelm reads SEA-HELM's FLORES-200 rows: "label" is the
	// reference, prompts[0].text the source, prompt_templates[0] the prompt.
	// The direction comes from the file name (en_to_ind_Latn) or from the
	// dataset's lang when it is written "en-id".
	FormatSeaHelm = "seahelm_flores"
)

// Axis options (AxisConfig.Options).
const (
	optDirections = "directions" // passage directions, default ["en-ms", "ms-en"]
	optFewshot    = "fewshot"    // dev examples in SEA-HELM prompts, default 0 (SEA-HELM: 0 instruct, 5 base)
	optExamples   = "examples"   // dataset name -> dev examples file, default derived from the devtest file name
	optMetricX    = "metricx"    // MetricX-24 name or spec (see MetricX); secondary metric, reported in notes
)

type options struct {
	directions []string
	fewshot    int
	examples   map[string]string
	metricx    string
	baseDir    string // resolves relative example paths, like dataset paths
}

func parseOptions(m map[string]any) (options, error) {
	o := options{directions: []string{"en-ms", "ms-en"}, examples: map[string]string{}}
	for _, k := range sortedKeys(m) {
		v := m[k]
		switch k {
		case optDirections:
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				return o, fmt.Errorf("nlg: option %s: want a non-empty list such as [en-ms, ms-en]", k)
			}
			o.directions = nil
			for _, d := range list {
				s, _ := d.(string)
				if s != "en-ms" && s != "ms-en" {
					return o, fmt.Errorf("nlg: option %s: unknown direction %v (want en-ms or ms-en)", k, d)
				}
				o.directions = append(o.directions, s)
			}
		case optFewshot:
			n, ok := asInt(v)
			if !ok || n < 0 {
				return o, fmt.Errorf("nlg: option %s: want a non-negative integer, got %v", k, v)
			}
			o.fewshot = n
		case optExamples:
			mm, ok := v.(map[string]any)
			if !ok {
				return o, fmt.Errorf("nlg: option %s: want a map from dataset name to file", k)
			}
			for name, p := range mm {
				s, ok := p.(string)
				if !ok || s == "" {
					return o, fmt.Errorf("nlg: option %s.%s: want a file path", k, name)
				}
				o.examples[name] = s
			}
		case optMetricX:
			s, ok := v.(string)
			if !ok {
				return o, fmt.Errorf("nlg: option %s: want a name or a spec such as tei+http://127.0.0.1:8080?mode=hybrid", k)
			}
			if err := checkMetricXSpec(s); err != nil {
				return o, fmt.Errorf("nlg: option %s: %w", k, err)
			}
			o.metricx = s
		default:
			return o, fmt.Errorf("nlg: unknown option %q (known: %s, %s, %s, %s)", k, optDirections, optExamples, optFewshot, optMetricX)
		}
	}
	return o, nil
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}

// Load reads the configured datasets into items: a built-in format
// (FormatPassages, FormatSeaHelm), a preset of the declarative mechanism,
// or a dataset declared by its fields alone (format nlg or none; see
// package scorers/dataset). A preset's items are its mappings' items, and
// a dataset's own fields replace the preset's entries of the same name.
func (Axis) Load(cfg scorers.AxisConfig) ([]scorers.Item, error) {
	return loadDatasets(cfg, loadDataset)
}

// loadDatasets reads every configured dataset with read and checks that no
// item id repeats across them.
func loadDatasets(cfg scorers.AxisConfig, read func(ds scorers.DatasetConfig, baseDir string, opt options, maxTokens int) ([]scorers.Item, error)) ([]scorers.Item, error) {
	opt, err := parseOptions(cfg.Options)
	if err != nil {
		return nil, err
	}
	opt.baseDir = cfg.BaseDir
	if len(cfg.Datasets) == 0 {
		return nil, fmt.Errorf("nlg: no datasets configured")
	}
	var items []scorers.Item
	seen := map[string]bool{}
	for _, ds := range cfg.Datasets {
		if ds.Name == "" {
			return nil, fmt.Errorf("nlg: dataset %s: missing name (item ids are built from it)", ds.Path)
		}
		path := ds.Source(cfg.BaseDir).Path()
		its, err := read(ds, cfg.BaseDir, opt, cfg.MaxTokens)
		if err != nil {
			return nil, err
		}
		for _, it := range its {
			if seen[it.ID] {
				return nil, fmt.Errorf("nlg: %s:%d: duplicate item id %q (give each dataset its own name)", path, it.Line, it.ID)
			}
			seen[it.ID] = true
		}
		items = append(items, its...)
	}
	return items, nil
}

// reading is how one dataset's rows become items: one mapping per item a
// row gives (a passage pair gives one per direction), the functions the
// mappings' templates call beside the documented ones, and the generation
// cap when the run sets none.
type reading struct {
	variants  []dataset.Mapping
	funcs     template.FuncMap
	maxTokens int
}

// presetReading is the reading of a built-in format, or of fields alone.
func presetReading(path string, ds scorers.DatasetConfig, opt options) (reading, error) {
	switch ds.Format {
	case FormatPassages:
		return passagesReading(opt), nil
	case FormatSeaHelm:
		return seahelmReading(path, ds, opt)
	case "", "nlg":
		if ds.Fields == nil {
			return reading{}, fmt.Errorf("nlg: dataset %q: format %s needs fields", ds.Name, "nlg")
		}
		return reading{variants: []dataset.Mapping{{}}, maxTokens: defaultMaxTokens}, nil
	}
	return reading{}, fmt.Errorf("nlg: dataset %q: unknown format %q (want %s, %s, or nlg with fields)", ds.Name, ds.Format, FormatPassages, FormatSeaHelm)
}

// q is a template constant: the text itself, whatever it holds.
func q(s string) dataset.Expr { return dataset.Expr("{{" + strconv.Quote(s) + "}}") }

// passagesReading: flores_passages_eng_zsm_from_belebele.jsonl's
// {"pair_id", "eng_Latn", "zsm_Latn"} rows, one item per configured
// direction, both directions of a pair one task.
func passagesReading(opt options) reading {
	r := reading{maxTokens: passageMaxTokens}
	for _, dir := range opt.directions {
		src, tgt := passageLangs[dir][0], passageLangs[dir][1]
		_, tgtLang, _ := strings.Cut(dir, "-")
		before, after, _ := strings.Cut(passageTemplates[tgtLang], "{text}")
		r.variants = append(r.variants, dataset.Mapping{
			ID: dataset.Expr(`{{"` + dir + `/"}}{{text .pair_id}}`), Task: "pair_id",
			Prompt: q(before) + dataset.Expr("{{."+src+"}}") + q(after),
			Text:   dataset.Expr(src), References: dataset.Expr(tgt),
			Direction: q(dir), AnswerTag: q("Terjemahan:"), Lang: q("ms"),
		})
	}
	return r
}

// seahelmReading: SEA-HELM's FLORES-200 rows, "label" the reference,
// prompts[0].text the source, prompt_templates[0] the prompt (else the
// built-in one for the target language), with the configured few-shot
// examples. The direction comes from the file name (en_to_ind_Latn) or
// from the dataset's lang when it is written "en-id".
func seahelmReading(path string, ds scorers.DatasetConfig, opt options) (reading, error) {
	srcLang, tgtLang, err := seahelmDirection(path, ds)
	if err != nil {
		return reading{}, err
	}
	m := dataset.Mapping{
		Text: "prompts.0.text", References: "label",
		Prompt:    `{{seahelmPrompt (opt . "prompt_templates.0") (opt . "prompts.0.text")}}`,
		AnswerTag: `{{seahelmTag (opt . "prompt_templates.0")}}`,
		Direction: q(srcLang + "-" + tgtLang),
		Lang:      `{{or (opt . "metadata.language") "id"}}`,
	}
	var shots []shot
	if opt.fewshot > 0 {
		if shots, err = loadExamples(path, ds, opt, m); err != nil {
			return reading{}, err
		}
	}
	// promptOf is the row's own prompt template, else the built-in one.
	promptOf := func(v any) (string, error) {
		tmpl := seahelmTemplates[tgtLang]
		if s := dataset.Text(v); s != "" {
			tmpl = s
		}
		if !strings.Contains(tmpl, "{text}") {
			if tmpl == "" {
				return "", fmt.Errorf("field prompt_templates[0]: missing, and there is no built-in prompt for target language %q", tgtLang)
			}
			return "", fmt.Errorf("field prompt_templates[0]: has no {text} placeholder")
		}
		return tmpl, nil
	}
	tag := func(tmpl string) string {
		if m := answerLine.FindStringSubmatch(tmpl); m != nil {
			return strings.TrimSpace(m[1])
		}
		return "Terjemahan:"
	}
	return reading{
		variants:  []dataset.Mapping{m},
		maxTokens: defaultMaxTokens,
		funcs: map[string]any{
			"seahelmPrompt": func(tmplv, text any) (string, error) {
				tmpl, err := promptOf(tmplv)
				if err != nil {
					return "", err
				}
				return renderSeaHelm(tmpl, dataset.Text(text), tag(tmpl), shots), nil
			},
			"seahelmTag": func(tmplv any) (string, error) {
				tmpl, err := promptOf(tmplv)
				return tag(tmpl), err
			},
		},
	}, nil
}

// loadDataset reads one dataset's rows through its reading's mappings
// (each refined by the dataset's own fields). Every error names the file,
// the line and the field.
func loadDataset(ds scorers.DatasetConfig, baseDir string, opt options, maxTokens int) ([]scorers.Item, error) {
	src := ds.Source(baseDir)
	path := src.Path()
	rd, err := presetReading(path, ds, opt)
	if err != nil {
		return nil, err
	}
	maxTokens = cmp.Or(maxTokens, rd.maxTokens)
	env := dataset.Env{Lang: ds.Lang, Funcs: rd.funcs}
	var cs []*dataset.Compiled
	for _, v := range rd.variants {
		m := v
		if ds.Fields != nil {
			m = dataset.Merge(v, *ds.Fields)
		}
		c, err := m.Compile("nlg", env)
		if err != nil {
			return nil, fmt.Errorf("nlg: dataset %q: %w", ds.Name, err)
		}
		cs = append(cs, c)
	}
	var items []scorers.Item
	rows := 0
	stop := errors.New("limit")
	header := func(cols dataset.Columns) error {
		for _, c := range cs {
			if err := c.CheckColumns(path, cols); err != nil {
				return fmt.Errorf("nlg: %w", err)
			}
		}
		return nil
	}
	err = dataset.Each(context.Background(), src, header, func(r dataset.Row) error {
		for k, want := range ds.Filter {
			if v, ok := r.Fields[k]; !ok || fmt.Sprint(v) != want {
				return nil
			}
		}
		for _, c := range cs {
			it, err := itemFromRow(c, r, ds, maxTokens, opt.metricx)
			if err != nil {
				return fmt.Errorf("nlg: %s:%d: %w", path, r.Line, err)
			}
			items = append(items, it)
		}
		if rows++; ds.Limit > 0 && rows == ds.Limit {
			return stop
		}
		return nil
	})
	if err != nil && err != stop {
		if strings.HasPrefix(err.Error(), "nlg: ") {
			return nil, err
		}
		return nil, fmt.Errorf("nlg: dataset %q: %w", ds.Name, err)
	}
	if rows == 0 {
		return nil, fmt.Errorf("nlg: %s: no rows", path)
	}
	return items, nil
}

// itemFromRow reads one item: its id (default the line), task, prompt,
// source text, references, direction, answer tag, pooling source, lang
// and register. A source text or a reference that is empty is an error.
func itemFromRow(c *dataset.Compiled, r dataset.Row, ds scorers.DatasetConfig, maxTokens int, metricx string) (scorers.Item, error) {
	get := map[string]string{}
	for _, key := range []string{"id", "task", "direction", "answer_tag", "source", "lang", "register"} {
		s, _, err := c.String(key, r)
		if err != nil {
			return scorers.Item{}, err
		}
		get[key] = s
	}
	text, hasText, err := c.Text("text", r)
	if err != nil {
		return scorers.Item{}, err
	}
	m := c.Mapping()
	if hasText && strings.TrimSpace(text) == "" {
		return scorers.Item{}, fmt.Errorf("field %s: missing or empty (fields.text)", strings.TrimSuffix(string(m.Text), "?"))
	}
	refs, _, err := c.Strings("references", r)
	if err != nil {
		return scorers.Item{}, err
	}
	if len(refs) == 0 {
		return scorers.Item{}, fmt.Errorf("field %s: no reference (fields.references)", m.References)
	}
	for i, ref := range refs {
		if strings.TrimSpace(ref) == "" {
			f := string(m.References)
			if len(refs) > 1 {
				f = fmt.Sprintf("%s[%d]", f, i)
			}
			return scorers.Item{}, fmt.Errorf("field %s: missing or empty (fields.references)", f)
		}
	}
	prompt, _, err := c.Text("prompt", r)
	if err != nil {
		return scorers.Item{}, err
	}
	if strings.TrimSpace(prompt) == "" {
		return scorers.Item{}, fmt.Errorf("field %s: empty prompt (fields.prompt)", m.Prompt)
	}
	switch get["register"] {
	case "", "HIGH", "MID", "LOW":
	default:
		return scorers.Item{}, fmt.Errorf("field %s: register must be HIGH, MID or LOW, got %q", m.Register, get["register"])
	}
	dir := get["direction"]
	if dir == "" && strings.Contains(ds.Lang, "-") {
		dir = ds.Lang
	}
	srcLang, tgtLang, _ := strings.Cut(dir, "-")
	lang := get["lang"]
	if lang == "" {
		lang = ds.Lang
		if tgtLang != "" {
			lang = tgtLang
		}
	}
	id := get["id"]
	if id == "" {
		id = strconv.Itoa(r.Line)
	}
	id = ds.Name + "/" + id
	task := id
	if get["task"] != "" {
		task = ds.Name + "/" + get["task"]
	}
	source := get["source"]
	source = cmp.Or(source, ds.Name)
	raw, _ := json.Marshal(extra{Direction: dir, SrcLang: srcLang, TgtLang: tgtLang, Source: text,
		AnswerTag: get["answer_tag"], MaxTokens: maxTokens, MetricX: metricx}) // only strings and ints
	return scorers.Item{
		ID: id, Axis: "nlg", Dataset: ds.Name, Line: r.Line, Source: source, Lang: lang, Register: get["register"],
		TaskID: task, Prompt: prompt, Gold: -1, References: refs, Extra: raw,
	}, nil
}

// Malay prompts for the passage directions, from SEA-HELM's translation
// config (languages.ms); the answer tag is "Terjemahan:".
var passageTemplates = map[string]string{
	"ms": "Terjemahkan teks berikut ke dalam Bahasa Melayu.\n\nJawab guna format ini sahaja:\n\"Terjemahan: TRANSLATION\"\nGantikan TRANSLATION dengan teks yang diterjemahkan.\n\nTeks:\n```\n{text}\n```",
	"en": "Terjemahkan teks berikut ke dalam Bahasa Inggeris.\n\nJawab guna format ini sahaja:\n\"Terjemahan: TRANSLATION\"\nGantikan TRANSLATION dengan teks yang telah diterjemahkan.\n\nTeks:\n```\n{text}\n```",
}

var passageLangs = map[string][2]string{ // direction -> JSON fields of source, target
	"en-ms": {"eng_Latn", "zsm_Latn"},
	"ms-en": {"zsm_Latn", "eng_Latn"},
}

// SEA-HELM's prompts for the staged FLORES files, used when a row carries no
// prompt_templates (the dev example rows do not).
var seahelmTemplates = map[string]string{
	"id": "Terjemahkan teks berikut ini ke dalam bahasa Indonesia.\n\nJawablah dengan hanya menggunakan format berikut ini:\nTerjemahan: $TRANSLATION\nGanti $TRANSLATION dengan teks yang telah diterjemahkan.{fewshot_examples}\n\nTeks: {text}",
	"en": "Terjemahkan teks berikut ini ke dalam bahasa Inggris.\n\nJawablah dengan hanya menggunakan format berikut ini:\nTerjemahan: $TRANSLATION\nGanti $TRANSLATION dengan teks yang telah diterjemahkan.{fewshot_examples}\n\nTeks: {text}",
}

var (
	dirInName = regexp.MustCompile(`(?:^|[^a-z])([a-z]{2,3})(?:_[A-Z][a-z]{3})?_to_([a-z]{2,3})(?:_[A-Z][a-z]{3})?`)
	// The answer line of a template: `Terjemahan: $TRANSLATION` or `"Terjemahan: TRANSLATION"`.
	answerLine = regexp.MustCompile(`(?m)^"?([^\n"$]*?:)\s*\$?TRANSLATION`)
	iso2       = map[string]string{"eng": "en", "ind": "id", "zsm": "ms", "msa": "ms", "may": "ms"}
)

func langCode(c string) string {
	if s, ok := iso2[c]; ok {
		return s
	}
	return c
}

// seahelmDirection reads the direction from the file name, or from the
// dataset's lang when it is written like "en-id".
func seahelmDirection(path string, ds scorers.DatasetConfig) (src, tgt string, err error) {
	if a, b, ok := strings.Cut(ds.Lang, "-"); ok && a != "" && b != "" {
		return a, b, nil
	}
	m := dirInName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return "", "", fmt.Errorf("nlg: dataset %q: cannot tell the translation direction from %s; name the file like en_to_ind_Latn.jsonl or set lang: en-id", ds.Name, path)
	}
	return langCode(m[1]), langCode(m[2]), nil
}

// shot is one few-shot example: its source text and reference.
type shot struct{ text, label string }

// renderSeaHelm fills a SEA-HELM template. Each few-shot example repeats the
// task part of the template (what follows {fewshot_examples}, e.g.
// "Teks: {text}") with the example's source, then the answer line.
func renderSeaHelm(tmpl, text, tag string, shots []shot) string {
	var fs strings.Builder
	if _, task, ok := strings.Cut(tmpl, "{fewshot_examples}"); ok && len(shots) > 0 {
		task = strings.TrimLeft(task, "\n")
		for _, s := range shots {
			fs.WriteString("\n\n")
			fs.WriteString(strings.ReplaceAll(task, "{text}", s.text))
			fs.WriteString("\n" + tag + " " + s.label)
		}
	}
	return strings.NewReplacer("{fewshot_examples}", fs.String(), "{text}", text).Replace(tmpl)
}

// loadExamples reads the dev examples for few-shot prompts, with the
// dataset's source text and reference columns: the file named in
// options.examples, else the devtest file's name with "devtest" replaced
// by "dev" and "_examples" before ".jsonl".
func loadExamples(path string, ds scorers.DatasetConfig, opt options, m dataset.Mapping) ([]shot, error) {
	ep, ok := opt.examples[ds.Name]
	if ok && !filepath.IsAbs(ep) && opt.baseDir != "" {
		ep = filepath.Join(opt.baseDir, ep)
	}
	if !ok {
		base := strings.Replace(filepath.Base(path), "devtest", "dev", 1)
		ep = filepath.Join(filepath.Dir(path), strings.TrimSuffix(base, ".jsonl")+"_examples.jsonl")
	}
	ex := dataset.Mapping{Prompt: m.Text, References: m.References}
	c, err := ex.Compile("nlg", dataset.Env{})
	if err != nil {
		return nil, err
	}
	var shots []shot
	stop := errors.New("enough")
	err = dataset.Each(context.Background(), dataset.Source{URI: ep}, nil, func(r dataset.Row) error {
		text, _, err := c.Text("prompt", r)
		if err == nil && strings.TrimSpace(text) == "" {
			err = fmt.Errorf("field %s: missing or empty", m.Text)
		}
		if err != nil {
			return fmt.Errorf("nlg: %s:%d: %w (few-shot example)", ep, r.Line, err)
		}
		label, _, err := c.String("references", r)
		if err == nil && strings.TrimSpace(label) == "" {
			err = fmt.Errorf("field %s: missing or empty", m.References)
		}
		if err != nil {
			return fmt.Errorf("nlg: %s:%d: %w (few-shot example)", ep, r.Line, err)
		}
		if shots = append(shots, shot{text, label}); len(shots) == opt.fewshot {
			return stop
		}
		return nil
	})
	if err != nil && err != stop {
		if strings.HasPrefix(err.Error(), "nlg: ") {
			return nil, err
		}
		return nil, fmt.Errorf("nlg: %w (few-shot examples for dataset %q; set options.examples)", err, ds.Name)
	}
	if len(shots) < opt.fewshot {
		return nil, fmt.Errorf("nlg: %s: %d examples, fewshot asks for %d", ep, len(shots), opt.fewshot)
	}
	return shots, nil
}
