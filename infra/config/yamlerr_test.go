package config

import (
	"strings"
	"testing"
)

const goodAxis = `model:
  spec: gguf:m.gguf
axes:
  knowledge:
    datasets:
      - {name: d, path: d.jsonl, format: global_mmlu}
`

// TestConfigErrorsInYAMLTerms checks the exact sentence a user sees for
// ordinary mistakes: the key's path, the keys allowed there, a near miss, the
// kind of value wanted, the line; never a Go type name.
func TestConfigErrorsInYAMLTerms(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"typo in an axis key", goodAxis + "    scoring_mod: both\n",
			"config bad.yaml: line 7: axes.knowledge.scoring_mod is not a known key; did you mean scoring_mode? (allowed under axes.knowledge: datasets, scoring_mode, weight, tier, max_tokens, probes, judge_overlay, scorer, options)"},
		{"typo at the top level", goodAxis + "judge:\n  - name: j\n",
			"config bad.yaml: line 7: judge is not a known key; did you mean judges? (allowed at the top level: bench_version, language, run, model, store, axes, judges, dedup)"},
		{"unknown key with no near miss", goodAxis + "    colour: blue\n",
			"config bad.yaml: line 7: axes.knowledge.colour is not a known key (allowed under axes.knowledge: datasets, scoring_mode, weight, tier, max_tokens, probes, judge_overlay, scorer, options)"},
		{"typo in a dataset", goodAxis + "      - {name: e, path: e.jsonl, formt: belebele}\n",
			"config bad.yaml: line 7: axes.knowledge.datasets[1].formt is not a known key; did you mean format? (allowed under axes.knowledge.datasets[1]: name, path, config, split, format, lm_eval_task, file_format, sha256, fields, fewshot, lang, limit, filter, license, register, human_validated, translation_of)"},
		{"text for a number", goodAxis + "run:\n  seed: abc\n",
			`config bad.yaml: line 8: run.seed must be a whole number, got "abc"`},
		{"a list for a single value", goodAxis + "language: [ms, id]\n",
			"config bad.yaml: line 7: language must be a single value (text), got a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "bad.yaml", "", Overrides{})
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
			for _, goWord := range []string{"scorers.", "config.", "type ", "int64", "unmarshal", "!!"} {
				if strings.Contains(err.Error(), goWord) {
					t.Errorf("message speaks Go (%q): %s", goWord, err)
				}
			}
		})
	}
}

func TestNearest(t *testing.T) {
	keys := []string{"datasets", "scoring_mode", "weight", "tier"}
	for key, want := range map[string]string{"scoring_mod": "scoring_mode", "wieght": "weight", "dataset": "datasets", "colour": "", "x": ""} {
		if got := nearest(key, keys); got != want {
			t.Errorf("nearest(%q) = %q, want %q", key, got, want)
		}
	}
}
