package safety

// The safeguard reader as it was before the SEA-HELM formats became
// presets of the declarative mechanism (scorers/dataset), kept verbatim but
// for its names so that TestPresetsMatchLegacyReaders can show the presets
// give the same items byte for byte.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
)

func legacyReadSafeguard(path string, d scorers.DatasetConfig) ([]scorers.Item, error) {
	f, err := dataset.Open(context.Background(), dataset.Source{URI: path, SHA256: d.SHA256})
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", d.Name, err)
	}
	defer f.Close()
	name := d.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var items []scorers.Item
	line := 0
	for sc.Scan() {
		line++
		data := []byte(strings.TrimSpace(sc.Text()))
		if len(data) == 0 {
			continue
		}
		if d.Limit > 0 && len(items) >= d.Limit {
			break
		}
		it, keep, err := legacyReadRow(data, d, name, line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if keep {
			items = append(items, it)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no prompts", path)
	}
	return items, nil
}

func legacyReadRow(data []byte, d scorers.DatasetConfig, name string, line int) (scorers.Item, bool, error) {
	var row struct {
		PromptLabel *string `json:"prompt_label"`
		Label       *string `json:"label"`
		Prompts     []struct {
			PromptText  *string `json:"prompt_text"`
			LocalPrompt *string `json:"local_prompt"`
		} `json:"prompts"`
		Metadata struct {
			Language string `json:"language"`
			Topic    string `json:"topic"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &row); err != nil {
		return scorers.Item{}, false, fmt.Errorf("invalid JSON: %v", err)
	}
	var raw string
	general := row.PromptLabel != nil
	switch {
	case general:
		raw = *row.PromptLabel
	case row.Label != nil:
		raw = *row.Label
	default:
		return scorers.Item{}, false, fmt.Errorf("field prompt_label (or label): missing")
	}
	harmful, ok := labels[raw]
	if !ok {
		field := "label"
		if general {
			field = "prompt_label"
		}
		return scorers.Item{}, false, fmt.Errorf("field %s: %q is not Harmful/Safe or Berbahaya/Selamat", field, raw)
	}
	if len(row.Prompts) == 0 {
		return scorers.Item{}, false, fmt.Errorf("field prompts: missing or empty")
	}
	var prompt string
	switch p := row.Prompts[0]; {
	case p.PromptText != nil:
		prompt = *p.PromptText
	case p.LocalPrompt != nil:
		prompt = *p.LocalPrompt
	}
	if strings.TrimSpace(prompt) == "" {
		return scorers.Item{}, false, fmt.Errorf("field prompts[0].prompt_text (or local_prompt): missing or empty")
	}
	for k, v := range d.Filter {
		switch k {
		case "topic":
			if row.Metadata.Topic != v {
				return scorers.Item{}, false, nil
			}
		case "label":
			if raw != v {
				return scorers.Item{}, false, nil
			}
		default:
			return scorers.Item{}, false, fmt.Errorf("filter.%s: the safeguard formats filter on topic or label only", k)
		}
	}
	lang := d.Lang
	if lang == "" {
		lang = row.Metadata.Language
	}
	// The general sets pool three source datasets named in metadata.topic;
	// that is the pooling tag the leakage audit needs. A cultural set is
	// one source; its topic (Hari Raya, LGBTQ, ...) is a breakdown, and a
	// second pool of the audit.
	source := name
	if general && row.Metadata.Topic != "" {
		source = row.Metadata.Topic
	}
	label := "Safe"
	if harmful {
		label = "Harmful"
	}
	ex, _ := json.Marshal(extra{Topic: row.Metadata.Topic, RawLabel: raw, Harmful: harmful})
	return scorers.Item{
		ID: fmt.Sprintf("%s/%d", name, line), Axis: "safety", Dataset: name, Line: line, Source: source,
		Lang: lang, Prompt: prompt, Gold: -1, Label: label, Extra: ex,
	}, true, nil
}
