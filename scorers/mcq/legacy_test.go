package mcq

// The MCQ dataset readers as they were before datasets became declarative
// (commit 0d1f43b), kept verbatim so that TestPresetsMatchLegacyReaders can
// show the presets give the same items byte for byte.

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/scorers"
)

// A reader turns one JSON line of a dataset into an item. It returns
// ok=false for rows the dataset's filter drops.
type legacyReader func(row map[string]any, d scorers.DatasetConfig) (scorers.Item, error)

// readers are the dataset formats the MCQ axes understand, by config name.
var legacyReaders = map[string]legacyReader{
	"global_mmlu": legacyReadGlobalMMLU,
	"belebele":    legacyReadBelebele,
	"indonli":     legacyReadIndoNLI,
	"kalahi":      legacyReadKalahi,
}

// Formats lists the dataset formats the MCQ axes read.
func legacyFormats() []string { return []string{"belebele", "global_mmlu", "indonli", "kalahi"} }

// LoadDataset reads one dataset file (JSONL, optionally gzipped). Every error
// names the file, the line and the field.
func legacyLoadDataset(axis string, d scorers.DatasetConfig, baseDir string) ([]scorers.Item, error) {
	var items []scorers.Item
	err := legacyEachInDataset(axis, d, baseDir, func(it scorers.Item) error {
		items = append(items, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// EachInDataset reads one dataset file like LoadDataset, a row at a time,
// calling fn with each item; an error from fn stops the read and is returned
// as it is.
func legacyEachInDataset(axis string, d scorers.DatasetConfig, baseDir string, fn func(scorers.Item) error) error {
	read, ok := legacyReaders[d.Format]
	if !ok {
		return fmt.Errorf("dataset %s: unknown format %q (known: %s)", d.Name, d.Format, strings.Join(legacyFormats(), ", "))
	}
	path := d.Path
	if !filepath.IsAbs(path) && baseDir != "" {
		path = filepath.Join(baseDir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("dataset %s: %w", d.Name, err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: not gzip: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	name := d.Name
	if name == "" {
		name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".jsonl")
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	n := 0
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var row map[string]any
		if err := json.Unmarshal([]byte(text), &row); err != nil {
			return fmt.Errorf("%s:%d: invalid JSON: %v", path, line, err)
		}
		if !legacyMatches(row, d.Filter) {
			continue
		}
		it, err := read(row, d)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if len(it.Choices) < 2 {
			return fmt.Errorf("%s:%d: fewer than two choices", path, line)
		}
		if it.Gold < 0 || it.Gold >= len(it.Choices) {
			return fmt.Errorf("%s:%d: field label/answer: gold option out of range", path, line)
		}
		it.Axis, it.Dataset, it.Line = axis, name, line
		if it.Lang == "" {
			it.Lang = d.Lang
		}
		if it.Source == "" {
			it.Source = name
		}
		if it.ID == "" {
			it.ID = strconv.Itoa(line)
		}
		it.ID = name + "/" + it.ID
		it.Prompt = Render(it)
		if err := fn(it); err != nil {
			return err
		}
		if n++; d.Limit > 0 && n == d.Limit {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	if n == 0 {
		return fmt.Errorf("dataset %s (%s): no rows", name, path)
	}
	return nil
}

func legacyMatches(row map[string]any, filter map[string]string) bool {
	for k, want := range filter {
		if fmt.Sprint(row[k]) != want {
			return false
		}
	}
	return true
}

func legacyStr(row map[string]any, field string) (string, error) {
	v, ok := row[field]
	if !ok {
		return "", fmt.Errorf("field %s: missing", field)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("field %s: want a string, got %T", field, v)
	}
	return s, nil
}

// letterIndex reads a gold answer given as a letter ("C") or a 0-based number.
func legacyLetterIndex(v any, field string) (int, error) {
	switch x := v.(type) {
	case string:
		x = strings.TrimSpace(x)
		if len(x) == 1 && x[0] >= 'A' && x[0] <= 'Z' {
			return int(x[0] - 'A'), nil
		}
		if n, err := strconv.Atoi(x); err == nil {
			return n, nil
		}
	case float64:
		if x == float64(int(x)) {
			return int(x), nil
		}
	}
	return 0, fmt.Errorf("field %s: want a letter A-Z or an index, got %v", field, v)
}

// firstPrompt returns prompts[0] of a SEA-HELM row.
func legacyFirstPrompt(row map[string]any) (map[string]any, error) {
	ps, ok := row["prompts"].([]any)
	if !ok || len(ps) == 0 {
		return nil, fmt.Errorf("field prompts: want a non-empty list")
	}
	p, ok := ps[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("field prompts[0]: want an object")
	}
	return p, nil
}

func legacyReadGlobalMMLU(row map[string]any, d scorers.DatasetConfig) (scorers.Item, error) {
	var it scorers.Item
	q, err := legacyStr(row, "question")
	if err != nil {
		return it, err
	}
	for _, k := range []string{"A", "B", "C", "D"} {
		c, err := legacyStr(row, k)
		if err != nil {
			return it, err
		}
		it.Choices = append(it.Choices, c)
	}
	if it.Gold, err = legacyLetterIndex(row["answer"], "answer"); err != nil {
		return it, err
	}
	it.ID, _ = row["sample_id"].(string)
	it.Source, _ = row["subject"].(string)
	it.Label = string(rune('A' + it.Gold))
	it.Extra = legacyMustJSON(map[string]string{"question": q})
	if it.Lang == "" {
		it.Lang = "ms"
	}
	return it, nil
}

func legacyReadBelebele(row map[string]any, d scorers.DatasetConfig) (scorers.Item, error) {
	var it scorers.Item
	p, err := legacyFirstPrompt(row)
	if err != nil {
		return it, err
	}
	passage, err := legacyStr(p, "text")
	if err != nil {
		return it, fmt.Errorf("prompts[0].%w", err)
	}
	q, err := legacyStr(p, "question")
	if err != nil {
		return it, fmt.Errorf("prompts[0].%w", err)
	}
	for i := 1; i <= 4; i++ {
		c, err := legacyStr(p, "choice"+strconv.Itoa(i))
		if err != nil {
			return it, fmt.Errorf("prompts[0].%w", err)
		}
		it.Choices = append(it.Choices, c)
	}
	if it.Gold, err = legacyLetterIndex(row["label"], "label"); err != nil {
		return it, err
	}
	if id, ok := row["id"].(float64); ok {
		it.ID = strconv.Itoa(int(id))
	}
	if m, ok := row["metadata"].(map[string]any); ok {
		it.Lang, _ = m["language"].(string)
	}
	it.Label = string(rune('A' + it.Gold))
	it.Extra = legacyMustJSON(map[string]string{"passage": passage, "question": q})
	return it, nil
}

// indoNLIChoices follows SEA-HELM's IndoNLI template: A entailment, B contradiction, C neutral.
var legacyIndoNLIChoices = []string{"entailment", "contradiction", "neutral"}

var legacyIndoNLIText = map[string][]string{
	"id": {"Jika KALIMAT_1 benar, maka KALIMAT_2 juga harus benar.", "KALIMAT_1 bertentangan dengan KALIMAT_2.", "Jika KALIMAT_1 benar, KALIMAT_2 mungkin benar atau mungkin tidak benar."},
	"ms": {"Jika AYAT_1 benar, maka AYAT_2 juga mesti benar.", "AYAT_1 bercanggah dengan AYAT_2.", "Jika AYAT_1 benar, AYAT_2 mungkin benar atau mungkin tidak benar."},
	"en": {"If SENTENCE_1 is true, then SENTENCE_2 must also be true.", "SENTENCE_1 contradicts SENTENCE_2.", "If SENTENCE_1 is true, SENTENCE_2 may or may not be true."},
}

func legacyReadIndoNLI(row map[string]any, d scorers.DatasetConfig) (scorers.Item, error) {
	var it scorers.Item
	p, err := legacyFirstPrompt(row)
	if err != nil {
		return it, err
	}
	s1, err := legacyStr(p, "sentence1")
	if err != nil {
		return it, fmt.Errorf("prompts[0].%w", err)
	}
	s2, err := legacyStr(p, "sentence2")
	if err != nil {
		return it, fmt.Errorf("prompts[0].%w", err)
	}
	label, err := legacyStr(row, "label")
	if err != nil {
		return it, err
	}
	it.Gold = -1
	for i, c := range legacyIndoNLIChoices {
		if c == label {
			it.Gold = i
		}
	}
	if it.Gold < 0 {
		return it, fmt.Errorf("field label: %q is not entailment, contradiction or neutral", label)
	}
	it.Lang = "id"
	if m, ok := row["metadata"].(map[string]any); ok {
		if l, ok := m["language"].(string); ok {
			it.Lang = l
		}
	}
	if d.Lang != "" {
		it.Lang = d.Lang
	}
	texts, ok := legacyIndoNLIText[it.Lang]
	if !ok {
		texts = legacyIndoNLIText["en"]
	}
	it.Choices = append([]string(nil), texts...)
	it.Label = label
	it.Extra = legacyMustJSON(map[string]string{"sentence1": s1, "sentence2": s2})
	return it, nil
}

func legacyReadKalahi(row map[string]any, d scorers.DatasetConfig) (scorers.Item, error) {
	var it scorers.Item
	p, err := legacyFirstPrompt(row)
	if err != nil {
		return it, err
	}
	q, err := legacyStr(p, "question")
	if err != nil {
		return it, fmt.Errorf("prompts[0].%w", err)
	}
	opts, err := legacyStr(p, "mcq")
	if err != nil {
		return it, fmt.Errorf("prompts[0].%w", err)
	}
	for _, ln := range strings.Split(opts, "\n") {
		if len(ln) >= 3 && ln[1] == ':' && ln[0] == byte('A'+len(it.Choices)) {
			it.Choices = append(it.Choices, strings.TrimSpace(ln[2:]))
		} else if n := len(it.Choices); n > 0 {
			it.Choices[n-1] += "\n" + ln
		}
	}
	if it.Gold, err = legacyLetterIndex(row["label"], "label"); err != nil {
		return it, err
	}
	if id, ok := row["id"].(float64); ok {
		it.ID = strconv.FormatInt(int64(id), 10)
	}
	it.Lang = "tl"
	it.Label = string(rune('A' + it.Gold))
	it.Extra = legacyMustJSON(map[string]string{"question": q})
	return it, nil
}

func legacyMustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return b
}
