package nlg

// The NLG dataset readers as they were before the formats became presets
// of the declarative mechanism (scorers/dataset), kept verbatim but for
// their names so that TestPresetsMatchLegacyReaders can show the presets
// give the same items byte for byte.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
)

// legacyLoad reads the configured datasets into items.
func legacyLoad(cfg scorers.AxisConfig) ([]scorers.Item, error) {
	return loadDatasets(cfg, func(ds scorers.DatasetConfig, baseDir string, opt options, maxTokens int) ([]scorers.Item, error) {
		path := ds.Source(baseDir).Path()
		switch ds.Format {
		case FormatPassages:
			return legacyLoadPassages(path, ds, opt, maxTokens)
		case FormatSeaHelm:
			return legacyLoadSeaHelm(path, ds, opt, maxTokens)
		}
		return nil, fmt.Errorf("nlg: dataset %q: unknown format %q (want %s or %s)", ds.Name, ds.Format, FormatPassages, FormatSeaHelm)
	})
}

// row is one non-blank JSONL line.
type legacyRow struct {
	line int
	raw  []byte
}

// legacyReadRows reads path's JSONL rows, applying the dataset's filter and limit.
func legacyReadRows(path string, ds scorers.DatasetConfig) ([]legacyRow, error) {
	f, err := dataset.Open(context.Background(), dataset.Source{URI: path, SHA256: ds.SHA256})
	if err != nil {
		return nil, fmt.Errorf("nlg: dataset %q: %w", ds.Name, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var rows []legacyRow
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
		rows = append(rows, legacyRow{n, append([]byte(nil), b...)})
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

func legacyLoadPassages(path string, ds scorers.DatasetConfig, opt options, maxTokens int) ([]scorers.Item, error) {
	rows, err := legacyReadRows(path, ds)
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
			items = append(items, legacyNewItem(ds, r.line, fmt.Sprintf("%s/%s/%d", ds.Name, dir, *p.PairID),
				fmt.Sprintf("%s/%d", ds.Name, *p.PairID), "ms",
				strings.ReplaceAll(passageTemplates[tgtLang], "{text}", src), tgt, ex))
		}
	}
	return items, nil
}

func legacyNewItem(ds scorers.DatasetConfig, line int, id, task, lang, prompt, ref string, ex extra) scorers.Item {
	raw, _ := json.Marshal(ex) // extra has only strings and ints
	return scorers.Item{
		ID: id, Axis: "nlg", Dataset: ds.Name, Line: line, Source: ds.Name, Lang: lang,
		TaskID: task, Prompt: prompt, Gold: -1, References: []string{ref}, Extra: raw,
	}
}

type legacySeahelmRow struct {
	Label   string `json:"label"`
	Prompts []struct {
		Text string `json:"text"`
	} `json:"prompts"`
	PromptTemplates []string `json:"prompt_templates"`
	Metadata        struct {
		Language string `json:"language"`
	} `json:"metadata"`
}

func (r *legacySeahelmRow) parse(path string, line int, raw []byte) error {
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

func legacyLoadSeaHelm(path string, ds scorers.DatasetConfig, opt options, maxTokens int) ([]scorers.Item, error) {
	srcLang, tgtLang, err := seahelmDirection(path, ds)
	if err != nil {
		return nil, err
	}
	rows, err := legacyReadRows(path, ds)
	if err != nil {
		return nil, err
	}
	var shots []legacySeahelmRow
	if opt.fewshot > 0 {
		if shots, err = legacyLoadExamples(path, ds, opt); err != nil {
			return nil, err
		}
	}
	if maxTokens == 0 {
		maxTokens = defaultMaxTokens
	}
	dir := srcLang + "-" + tgtLang
	items := make([]scorers.Item, 0, len(rows))
	for _, r := range rows {
		var sr legacySeahelmRow
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
		prompt := legacyRenderSeaHelm(tmpl, sr.Prompts[0].Text, tag, shots)
		lang := sr.Metadata.Language
		if lang == "" {
			lang = "id"
		}
		ex := extra{Direction: dir, SrcLang: srcLang, TgtLang: tgtLang, Source: sr.Prompts[0].Text,
			AnswerTag: tag, MaxTokens: maxTokens, MetricX: opt.metricx}
		id := fmt.Sprintf("%s/%d", ds.Name, r.line)
		items = append(items, legacyNewItem(ds, r.line, id, id, lang, prompt, sr.Label, ex))
	}
	return items, nil
}

// legacyRenderSeaHelm fills a SEA-HELM template. Each few-shot example repeats the
// task part of the template (what follows {fewshot_examples}, e.g.
// "Teks: {text}") with the example's source, then the answer line.
func legacyRenderSeaHelm(tmpl, text, tag string, shots []legacySeahelmRow) string {
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

// legacyLoadExamples reads the dev examples for few-shot prompts: the file named in
// options.examples, else the devtest file's name with "devtest" replaced by
// "dev" and "_examples" before ".jsonl".
func legacyLoadExamples(path string, ds scorers.DatasetConfig, opt options) ([]legacySeahelmRow, error) {
	ep, ok := opt.examples[ds.Name]
	if ok && !filepath.IsAbs(ep) && opt.baseDir != "" {
		ep = filepath.Join(opt.baseDir, ep)
	}
	if !ok {
		base := strings.Replace(filepath.Base(path), "devtest", "dev", 1)
		ep = filepath.Join(filepath.Dir(path), strings.TrimSuffix(base, ".jsonl")+"_examples.jsonl")
	}
	rows, err := legacyReadRows(ep, scorers.DatasetConfig{Name: ds.Name + " examples"})
	if err != nil {
		return nil, fmt.Errorf("%w (few-shot examples for dataset %q; set options.examples)", err, ds.Name)
	}
	if len(rows) < opt.fewshot {
		return nil, fmt.Errorf("nlg: %s: %d examples, fewshot asks for %d", ep, len(rows), opt.fewshot)
	}
	shots := make([]legacySeahelmRow, opt.fewshot)
	for i := range shots {
		if err := shots[i].parse(ep, rows[i].line, rows[i].raw); err != nil {
			return nil, err
		}
	}
	return shots, nil
}
