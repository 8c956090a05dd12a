package nlg

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

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

// Load reads the configured datasets into items.
func (Axis) Load(cfg scorers.AxisConfig) ([]scorers.Item, error) {
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
		var its []scorers.Item
		switch ds.Format {
		case FormatPassages:
			its, err = loadPassages(path, ds, opt, cfg.MaxTokens)
		case FormatSeaHelm:
			its, err = loadSeaHelm(path, ds, opt, cfg.MaxTokens)
		default:
			err = fmt.Errorf("nlg: dataset %q: unknown format %q (want %s or %s)", ds.Name, ds.Format, FormatPassages, FormatSeaHelm)
		}
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

// row is one non-blank JSONL line.
type row struct {
	line int
	raw  []byte
}

// readRows reads path's JSONL rows, applying the dataset's filter and limit.
func readRows(path string, ds scorers.DatasetConfig) ([]row, error) {
	f, err := dataset.Open(context.Background(), dataset.Source{URI: path, SHA256: ds.SHA256})
	if err != nil {
		return nil, fmt.Errorf("nlg: dataset %q: %w", ds.Name, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var rows []row
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if len(ds.Filter) > 0 {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				return nil, errf(path, n, "", "bad JSON: %v", err)
			}
			keep := true
			for k, want := range ds.Filter {
				v, ok := m[k]
				keep = keep && ok && fmt.Sprint(v) == want
			}
			if !keep {
				continue
			}
		}
		rows = append(rows, row{n, append([]byte(nil), b...)})
		if ds.Limit > 0 && len(rows) == ds.Limit {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("nlg: %s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("nlg: %s: no rows", path)
	}
	return rows, nil
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

func loadPassages(path string, ds scorers.DatasetConfig, opt options, maxTokens int) ([]scorers.Item, error) {
	rows, err := readRows(path, ds)
	if err != nil {
		return nil, err
	}
	if maxTokens == 0 {
		maxTokens = passageMaxTokens
	}
	var items []scorers.Item
	for _, r := range rows {
		var p struct {
			PairID *int   `json:"pair_id"`
			Eng    string `json:"eng_Latn"`
			Zsm    string `json:"zsm_Latn"`
		}
		if err := json.Unmarshal(r.raw, &p); err != nil {
			return nil, errf(path, r.line, "", "bad JSON: %v", err)
		}
		if p.PairID == nil {
			return nil, errf(path, r.line, "pair_id", "missing")
		}
		text := map[string]string{"eng_Latn": p.Eng, "zsm_Latn": p.Zsm}
		for _, f := range []string{"eng_Latn", "zsm_Latn"} {
			if strings.TrimSpace(text[f]) == "" {
				return nil, errf(path, r.line, f, "missing or empty")
			}
		}
		for _, dir := range opt.directions {
			src, tgt := text[passageLangs[dir][0]], text[passageLangs[dir][1]]
			srcLang, tgtLang, _ := strings.Cut(dir, "-")
			ex := extra{Direction: dir, SrcLang: srcLang, TgtLang: tgtLang, Source: src,
				AnswerTag: "Terjemahan:", MaxTokens: maxTokens, MetricX: opt.metricx}
			items = append(items, newItem(ds, r.line, fmt.Sprintf("%s/%s/%d", ds.Name, dir, *p.PairID),
				fmt.Sprintf("%s/%d", ds.Name, *p.PairID), "ms",
				strings.ReplaceAll(passageTemplates[tgtLang], "{text}", src), tgt, ex))
		}
	}
	return items, nil
}

func newItem(ds scorers.DatasetConfig, line int, id, task, lang, prompt, ref string, ex extra) scorers.Item {
	raw, _ := json.Marshal(ex) // extra has only strings and ints
	return scorers.Item{
		ID: id, Axis: "nlg", Dataset: ds.Name, Line: line, Source: ds.Name, Lang: lang,
		TaskID: task, Prompt: prompt, Gold: -1, References: []string{ref}, Extra: raw,
	}
}

type seahelmRow struct {
	Label   string `json:"label"`
	Prompts []struct {
		Text string `json:"text"`
	} `json:"prompts"`
	PromptTemplates []string `json:"prompt_templates"`
	Metadata        struct {
		Language string `json:"language"`
	} `json:"metadata"`
}

func (r *seahelmRow) parse(path string, line int, raw []byte) error {
	if err := json.Unmarshal(raw, r); err != nil {
		return errf(path, line, "", "bad JSON: %v", err)
	}
	if strings.TrimSpace(r.Label) == "" {
		return errf(path, line, "label", "missing or empty")
	}
	if len(r.Prompts) == 0 || strings.TrimSpace(r.Prompts[0].Text) == "" {
		return errf(path, line, "prompts[0].text", "missing or empty")
	}
	return nil
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

func loadSeaHelm(path string, ds scorers.DatasetConfig, opt options, maxTokens int) ([]scorers.Item, error) {
	srcLang, tgtLang, err := seahelmDirection(path, ds)
	if err != nil {
		return nil, err
	}
	rows, err := readRows(path, ds)
	if err != nil {
		return nil, err
	}
	var shots []seahelmRow
	if opt.fewshot > 0 {
		if shots, err = loadExamples(path, ds, opt); err != nil {
			return nil, err
		}
	}
	if maxTokens == 0 {
		maxTokens = defaultMaxTokens
	}
	dir := srcLang + "-" + tgtLang
	items := make([]scorers.Item, 0, len(rows))
	for _, r := range rows {
		var sr seahelmRow
		if err := sr.parse(path, r.line, r.raw); err != nil {
			return nil, err
		}
		tmpl := seahelmTemplates[tgtLang]
		if len(sr.PromptTemplates) > 0 && sr.PromptTemplates[0] != "" {
			tmpl = sr.PromptTemplates[0]
		}
		if !strings.Contains(tmpl, "{text}") {
			if tmpl == "" {
				return nil, errf(path, r.line, "prompt_templates[0]", "missing, and there is no built-in prompt for target language %q", tgtLang)
			}
			return nil, errf(path, r.line, "prompt_templates[0]", "has no {text} placeholder")
		}
		tag := "Terjemahan:"
		if m := answerLine.FindStringSubmatch(tmpl); m != nil {
			tag = strings.TrimSpace(m[1])
		}
		prompt := renderSeaHelm(tmpl, sr.Prompts[0].Text, tag, shots)
		lang := sr.Metadata.Language
		if lang == "" {
			lang = "id"
		}
		ex := extra{Direction: dir, SrcLang: srcLang, TgtLang: tgtLang, Source: sr.Prompts[0].Text,
			AnswerTag: tag, MaxTokens: maxTokens, MetricX: opt.metricx}
		id := fmt.Sprintf("%s/%d", ds.Name, r.line)
		items = append(items, newItem(ds, r.line, id, id, lang, prompt, sr.Label, ex))
	}
	return items, nil
}

// renderSeaHelm fills a SEA-HELM template. Each few-shot example repeats the
// task part of the template (what follows {fewshot_examples}, e.g.
// "Teks: {text}") with the example's source, then the answer line.
func renderSeaHelm(tmpl, text, tag string, shots []seahelmRow) string {
	var fs strings.Builder
	if _, task, ok := strings.Cut(tmpl, "{fewshot_examples}"); ok && len(shots) > 0 {
		task = strings.TrimLeft(task, "\n")
		for _, s := range shots {
			fs.WriteString("\n\n")
			fs.WriteString(strings.ReplaceAll(task, "{text}", s.Prompts[0].Text))
			fs.WriteString("\n" + tag + " " + s.Label)
		}
	}
	return strings.NewReplacer("{fewshot_examples}", fs.String(), "{text}", text).Replace(tmpl)
}

// loadExamples reads the dev examples for few-shot prompts: the file named in
// options.examples, else the devtest file's name with "devtest" replaced by
// "dev" and "_examples" before ".jsonl".
func loadExamples(path string, ds scorers.DatasetConfig, opt options) ([]seahelmRow, error) {
	ep, ok := opt.examples[ds.Name]
	if ok && !filepath.IsAbs(ep) && opt.baseDir != "" {
		ep = filepath.Join(opt.baseDir, ep)
	}
	if !ok {
		base := strings.Replace(filepath.Base(path), "devtest", "dev", 1)
		ep = filepath.Join(filepath.Dir(path), strings.TrimSuffix(base, ".jsonl")+"_examples.jsonl")
	}
	rows, err := readRows(ep, scorers.DatasetConfig{Name: ds.Name + " examples"})
	if err != nil {
		return nil, fmt.Errorf("%w (few-shot examples for dataset %q; set options.examples)", err, ds.Name)
	}
	if len(rows) < opt.fewshot {
		return nil, fmt.Errorf("nlg: %s: %d examples, fewshot asks for %d", ep, len(rows), opt.fewshot)
	}
	shots := make([]seahelmRow, opt.fewshot)
	for i := range shots {
		if err := shots[i].parse(ep, rows[i].line, rows[i].raw); err != nil {
			return nil, err
		}
	}
	return shots, nil
}
