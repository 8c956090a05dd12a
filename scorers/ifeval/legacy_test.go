package ifeval

// The IF prompt readers as they were before the formats became presets of
// the declarative mechanism (scorers/dataset), kept verbatim but for their
// names so that TestPresetsMatchLegacyReaders can show the presets give
// the same prompts and items byte for byte.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// legacyReadPrompts reads a prompt file: IFEval's input_data.jsonl
// (DialectIFEval, lang defaults to "en") or SEA-IFEval rows (DialectSEA).
// Every prompt's checkers are built, so a bad instruction is reported here,
// with the file, line, key and id.
func legacyReadPrompts(path, dialect, lang string) ([]Prompt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ps, err := legacyParsePrompts(f, dialect, lang)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ps, nil
}

// ParsePrompts is legacyReadPrompts on a reader.
func legacyParsePrompts(r io.Reader, dialect, lang string) ([]Prompt, error) {
	var out []Prompt
	seen := map[string]int{}
	err := eachLine(r, func(line int, b []byte) error {
		var p Prompt
		var err error
		switch dialect {
		case DialectIFEval:
			p, err = legacyParseIFEvalLine(b, lang)
		case DialectSEA:
			p, err = legacyParseSEALine(b)
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

func legacyParseIFEvalLine(b []byte, lang string) (Prompt, error) {
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

func legacyParseSEALine(b []byte) (Prompt, error) {
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
