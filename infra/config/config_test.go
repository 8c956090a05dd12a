package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const good = `
model:
  spec: gguf:models/m.gguf
axes:
  knowledge:
    datasets:
      - {name: d, path: d.jsonl, format: global_mmlu}
`

func TestParseDefaultsAndPaths(t *testing.T) {
	c, err := Parse([]byte(good), "c.yaml", "/cfg", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.Spec != "gguf:/cfg/models/m.gguf" || c.Model.ID != "m" {
		t.Fatalf("model = %+v", c.Model)
	}
	if c.Run.MaxWallSeconds != 10800 || c.Run.BootstrapResamples != 1000 || c.Run.ChatTemplate != "auto" || c.Run.NearChanceEps != 0.05 {
		t.Fatalf("run defaults = %+v", c.Run)
	}
	k := c.Axes["knowledge"]
	if *k.Weight != 1 || k.Tier != "public" || k.ScoringMode != "cloze" || k.BaseDir != "/cfg" {
		t.Fatalf("axis defaults = %+v", k)
	}
	if c.BenchVersion != BenchVersion || c.Store.URI != ".glossobench/store" {
		t.Fatalf("config = %+v", c)
	}
	c, err = Parse([]byte(good+"dedup:\n  corpus: [corpus/*.jsonl.gz, /abs/c.txt, \"s3://b/p/?region=x\"]\n"), "c.yaml", "/cfg", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Dedup.Corpus, " "); got != "/cfg/corpus/*.jsonl.gz /abs/c.txt s3://b/p/?region=x" {
		t.Fatalf("corpus paths resolve to %s", got)
	}
}

func TestOverridesWin(t *testing.T) {
	c, err := Parse([]byte(good), "c.yaml", "/cfg", Overrides{Model: "openai:http://127.0.0.1:8080", ModelID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.Spec != "openai:http://127.0.0.1:8080" || c.Model.ID != "x" {
		t.Fatalf("model = %+v", c.Model)
	}
}

func TestErrorsNameFileAndField(t *testing.T) {
	cases := map[string]string{
		"unknown key":       good + "bogus: 1\n",
		"bad scoring mode":  strings.Replace(good, "knowledge:\n", "knowledge:\n    scoring_mode: guess\n", 1),
		"unknown axis":      strings.Replace(good, "knowledge:", "telepathy:", 1),
		"missing model":     strings.Replace(good, "spec: gguf:models/m.gguf", "name: x", 1),
		"bad model spec":    strings.Replace(good, "gguf:models/m.gguf", "ftp://x", 1),
		"missing path":      strings.Replace(good, "path: d.jsonl, ", "", 1),
		"bad probe":         strings.Replace(good, "knowledge:\n", "knowledge:\n    probes: [reverse]\n", 1),
		"bad chat template": good + "run:\n  chat_template: sometimes\n",
		"wrong type":        good + "run:\n  seed: lots\n",
		"empty":             "",
		"bad translation":   strings.Replace(good, "path: d.jsonl, ", "path: d.jsonl, translation_of: nowhere, ", 1),
		"few resamples":     good + "run:\n  bootstrap_resamples: 29\n",
		"many resamples":    good + "run:\n  bootstrap_resamples: 2001\n",
		"bad judge floor":   good + "run:\n  judge_floor: 1.5\n",
		"wall at reserve":   good + "run:\n  max_wall_seconds: 120\n",
		"many parallel":     good + "run:\n  parallel_shards: 251\n",
		"rules not safety":  strings.Replace(good, "knowledge:\n", "knowledge:\n    scorer: rules\n", 1),
		"zero resamples":    good + "run:\n  bootstrap_resamples: 0\n",
		"negative eps":      good + "run:\n  near_chance_eps: -0.5\n",
		"eps of 2":          good + "run:\n  near_chance_eps: 2\n",
		"eps of 1":          good + "run:\n  near_chance_eps: 1\n",
	}
	wants := map[string]string{
		"unknown key": "bogus is not a known key", "bad scoring mode": "axes.knowledge.scoring_mode",
		"unknown axis": "axes.telepathy", "missing model": "model.spec", "bad model spec": "model.spec",
		"missing path": "axes.knowledge.datasets[0].path", "bad probe": "axes.knowledge.probes",
		"bad chat template": "run.chat_template", "wrong type": "line 9: run.seed must be a whole number", "empty": "empty",
		"bad translation": "axes.knowledge.datasets[0].translation_of",
		"few resamples":   "run.bootstrap_resamples", "many resamples": "run.bootstrap_resamples",
		"bad judge floor": "run.judge_floor", "wall at reserve": "run.max_wall_seconds: must exceed the 120 s",
		"rules not safety": "axes.knowledge.scorer",
		"many parallel":    "run.parallel_shards: at most 250",
		"zero resamples":   "run.bootstrap_resamples: must be 30 to 2000 (spec §3), got 0",
		"negative eps":     "run.near_chance_eps", "eps of 2": "run.near_chance_eps", "eps of 1": "run.near_chance_eps",
	}
	for name, doc := range cases {
		_, err := Parse([]byte(doc), "my.yaml", "", Overrides{})
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), "my.yaml") || !strings.Contains(err.Error(), wants[name]) {
			t.Errorf("%s: error %q does not name the file and %q", name, err, wants[name])
		}
	}
}

func TestHashStableAndSensitive(t *testing.T) {
	a, _ := Parse([]byte(good), "c.yaml", "/cfg", Overrides{})
	b, _ := Parse([]byte(good), "c.yaml", "/cfg", Overrides{})
	c, _ := Parse([]byte(good+"run:\n  seed: 7\n"), "c.yaml", "/cfg", Overrides{})
	if a.Hash() != b.Hash() || a.Hash() == c.Hash() {
		t.Fatal("config hash must be stable and change with the config")
	}
}

// TestZeroIsAValue: weight 0 and judge_floor 0 are values a config may set,
// not "unset" silently replaced by the defaults 1 and 0.5.
func TestZeroIsAValue(t *testing.T) {
	parse := func(doc string) *Config {
		t.Helper()
		c, err := Parse([]byte(doc), "c.yaml", "/cfg", Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	weighted := func(w string) string {
		return strings.Replace(good, "knowledge:\n", "knowledge:\n    weight: "+w+"\n", 1)
	}
	if parse(weighted("0")).Hash() == parse(weighted("1")).Hash() {
		t.Error("weight: 0 reads as weight: 1")
	}
	if parse(good+"run:\n  judge_floor: 0\n").Hash() == parse(good+"run:\n  judge_floor: 0.5\n").Hash() {
		t.Error("judge_floor: 0 reads as the default 0.5")
	}
	if parse(good).Hash() != parse(weighted("1")).Hash() {
		t.Error("an unset weight is not the default 1")
	}
	// seed 0 and near_chance_eps 0 are values, not the defaults 1234 and 0.05.
	if c := parse(good + "run:\n  seed: 0\n  near_chance_eps: 0\n"); c.Run.Seed != 0 || c.Run.NearChanceEps != 0 {
		t.Errorf("seed 0, near_chance_eps 0 read as %d, %g", c.Run.Seed, c.Run.NearChanceEps)
	}
	if c := parse(good); c.Run.Seed != 1234 || c.Run.BootstrapResamples != 1000 || c.Run.NearChanceEps != 0.05 {
		t.Errorf("defaults %d, %d, %g", c.Run.Seed, c.Run.BootstrapResamples, c.Run.NearChanceEps)
	}
}

func TestQuickstartConfigLoads(t *testing.T) {
	c, err := Load(filepath.Join("..", "..", "testdata", "quickstart.yaml"), Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.AxisNames(), ","); got != "knowledge,nlu,if,nlg,mt,safety,cultural" {
		t.Fatalf("axes = %s", got)
	}
	for _, spec := range []string{c.Model.Spec, c.Judges[0].Spec} {
		if _, err := os.Stat(strings.TrimPrefix(spec, "gguf:")); err != nil {
			t.Fatalf("quick-start model: %v", err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("axes: {knowledge: {datasets: [{path: x}]}}"))
	f.Add([]byte("model: [1, 2"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.yaml", "", Overrides{})
		if err == nil && c.Model.Spec == "" {
			t.Fatal("accepted a config without a model")
		}
		if err != nil && !strings.Contains(err.Error(), "fuzz.yaml") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

func TestChatTemplateOverride(t *testing.T) {
	c, err := Parse([]byte(good), "c.yaml", "", Overrides{ChatTemplate: "always"})
	if err != nil || c.Run.ChatTemplate != "always" {
		t.Fatalf("chat template %q, %v", c.Run.ChatTemplate, err)
	}
	if _, err := Parse([]byte(good), "c.yaml", "", Overrides{ChatTemplate: "never"}); err == nil || !strings.Contains(err.Error(), "run.chat_template") {
		t.Fatalf("bad --chat-template accepted: %v", err)
	}
}

// TestHashIsContentNotLocation: the same YAML and data in two folders give
// one config hash; another dataset content gives another.
func TestHashIsContentNotLocation(t *testing.T) {
	doc := good + "store:\n  uri: out\n"
	load := func(dir, data string) *Config {
		t.Helper()
		os.WriteFile(filepath.Join(dir, "d.jsonl"), []byte(data), 0o644)
		c, err := Parse([]byte(doc), "c.yaml", dir, Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := load(t.TempDir(), "{\"row\": 1}\n"), load(t.TempDir(), "{\"row\": 1}\n")
	if a.Hash() != b.Hash() {
		t.Error("config hash depends on the config's folder")
	}
	ha, err := a.ContentHash()
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := b.ContentHash()
	hc, _ := load(t.TempDir(), "{\"row\": 2}\n").ContentHash()
	if ha != hb || ha == hc {
		t.Errorf("content hashes %s %s %s: same data must match, other data must not", ha, hb, hc)
	}
	os.Remove(filepath.Join(a.Axes["knowledge"].BaseDir, "d.jsonl"))
	if _, err := a.ContentHash(); err == nil || !strings.Contains(err.Error(), "axes.knowledge.datasets[0].path") {
		t.Errorf("missing dataset: %v", err)
	}
}

// TestOverridesChangeOnlyWhatTheyName: --model and --model-id (and the
// workflow input's model and model_id) replace those two fields and
// nothing else; every relative path of the config still resolves against
// the config file's folder. A command-line GGUF path is the user's own,
// relative to the working directory, so it is left as written.
func TestOverridesChangeOnlyWhatTheyName(t *testing.T) {
	doc := good + `judges:
  - {name: j, spec: "gguf:models/judge.gguf"}
dedup:
  corpus: [corpus/a.jsonl]
`
	for _, ov := range []Overrides{
		{Model: "http://127.0.0.1:18080"},
		{Model: "openai:http://127.0.0.1:8000/v1", ModelID: "my-model"},
		{Model: "gguf:here/m.gguf"},
		{ModelID: "only-the-id"},
	} {
		c, err := Parse([]byte(doc), "c.yaml", "/cfg", ov)
		if err != nil {
			t.Fatal(err)
		}
		wantSpec := "gguf:/cfg/models/m.gguf"
		if ov.Model != "" {
			wantSpec = ov.Model
		}
		if c.Model.Spec != wantSpec {
			t.Errorf("%+v: model.spec %q, want %q", ov, c.Model.Spec, wantSpec)
		}
		if ov.ModelID != "" && c.Model.ID != ov.ModelID {
			t.Errorf("%+v: model.id %q", ov, c.Model.ID)
		}
		if k := c.Axes["knowledge"]; k.BaseDir != "/cfg" {
			t.Errorf("%+v: dataset paths resolve against %q, want the config's folder /cfg", ov, k.BaseDir)
		}
		if c.Judges[0].Spec != "gguf:/cfg/models/judge.gguf" {
			t.Errorf("%+v: judge spec %q, want it resolved against /cfg", ov, c.Judges[0].Spec)
		}
		if c.Dedup.Corpus[0] != "/cfg/corpus/a.jsonl" {
			t.Errorf("%+v: corpus %q, want it resolved against /cfg", ov, c.Dedup.Corpus[0])
		}
	}
}

// TestLimitCapsEveryDataset: --limit N (Overrides.Limit, or run.limit)
// lowers every dataset's limit to N, keeps a smaller one, changes the
// config hash, and a limit below 1 is refused with a sentence.
func TestLimitCapsEveryDataset(t *testing.T) {
	doc := strings.Replace(good, "format: global_mmlu}", "format: global_mmlu}\n      - {name: e, path: e.jsonl, format: global_mmlu, limit: 3}", 1)
	full, err := Parse([]byte(doc), "c.yaml", "/cfg", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	limited, err := Parse([]byte(doc), "c.yaml", "/cfg", Overrides{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, d := range limited.Axes["knowledge"].Datasets {
		got = append(got, d.Limit)
	}
	if len(got) != 2 || got[0] != 20 || got[1] != 3 {
		t.Errorf("dataset limits %v, want [20 3]", got)
	}
	if limited.Run.Limit == nil || *limited.Run.Limit != 20 {
		t.Errorf("run.limit %v, want 20", limited.Run.Limit)
	}
	if d := full.Axes["knowledge"].Datasets[0]; d.Limit != 0 {
		t.Errorf("without --limit the dataset's limit is %d, want 0 (all rows)", d.Limit)
	}
	other, _ := Parse([]byte(doc), "c.yaml", "/cfg", Overrides{Limit: 30})
	if full.Hash() == limited.Hash() || limited.Hash() == other.Hash() {
		t.Error("the config hash does not change with --limit")
	}
	fromYAML, err := Parse([]byte(doc+"run:\n  limit: 20\n"), "c.yaml", "/cfg", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if fromYAML.Hash() != limited.Hash() {
		t.Error("run.limit: 20 and --limit 20 hash differently")
	}
	// WithLimit (what preflight reads) leaves the config it copies alone.
	five := limited.WithLimit(5)
	if five.Axes["knowledge"].Datasets[0].Limit != 5 || limited.Axes["knowledge"].Datasets[0].Limit != 20 || *limited.Run.Limit != 20 {
		t.Error("WithLimit changed the config it copies, or did not cap the copy")
	}
	if two := limited.WithLimit(50); two.Axes["knowledge"].Datasets[0].Limit != 20 {
		t.Error("WithLimit raised a limit")
	}
	for _, tc := range []struct {
		doc string
		ov  Overrides
	}{{doc, Overrides{Limit: -1}}, {doc + "run:\n  limit: 0\n", Overrides{}}, {doc + "run:\n  limit: -5\n", Overrides{}}} {
		_, err := Parse([]byte(tc.doc), "c.yaml", "/cfg", tc.ov)
		if err == nil || !strings.Contains(err.Error(), "c.yaml: run.limit (--limit): the rows read from every dataset must be at least 1") {
			t.Errorf("limit below 1: error %v", err)
		}
	}
}

// TestNearChanceEnvIsChecked: MB_NEAR_CHANCE_EPS sets the default epsilon
// and is refused by name when it is no number in [0, 1).
func TestNearChanceEnvIsChecked(t *testing.T) {
	t.Setenv("MB_NEAR_CHANCE_EPS", "0")
	if c, err := Parse([]byte(good), "c.yaml", "", Overrides{}); err != nil || c.Run.NearChanceEps != 0 {
		t.Errorf("MB_NEAR_CHANCE_EPS=0: %v, %v", c, err)
	}
	for _, bad := range []string{"2", "-1", "lots"} {
		t.Setenv("MB_NEAR_CHANCE_EPS", bad)
		if _, err := Parse([]byte(good), "c.yaml", "", Overrides{}); err == nil || !strings.Contains(err.Error(), "MB_NEAR_CHANCE_EPS") {
			t.Errorf("MB_NEAR_CHANCE_EPS=%s: %v", bad, err)
		}
	}
}

// TestHashLeavesOutWhatDoesNotChangeTheNumbers: config_hash says "same
// config": the same YAML under another model id, credential name or
// checkpoint/heartbeat cadence hashes alike; the seed, a judge's model name
// and the model's chat format do not.
func TestHashLeavesOutWhatDoesNotChangeTheNumbers(t *testing.T) {
	hash := func(doc string, ov Overrides) string {
		t.Helper()
		c, err := Parse([]byte(doc), "c.yaml", "/cfg", ov)
		if err != nil {
			t.Fatal(err)
		}
		return c.Hash()
	}
	base := hash(good, Overrides{})
	for name, doc := range map[string]string{
		"model.id":             strings.Replace(good, "spec: gguf:models/m.gguf", "spec: gguf:models/m.gguf\n  id: another", 1),
		"model.api_key_env":    strings.Replace(good, "spec: gguf:models/m.gguf", "spec: gguf:models/m.gguf\n  api_key_env: KEY", 1),
		"run.checkpoint_every": good + "run:\n  checkpoint_every: 3\n  heartbeat_seconds: 9\n",
	} {
		if hash(doc, Overrides{}) != base {
			t.Errorf("%s changes config_hash", name)
		}
	}
	if hash(good, Overrides{ModelID: "x"}) != base {
		t.Error("--model-id changes config_hash")
	}
	for name, doc := range map[string]string{
		"run.seed":          good + "run:\n  seed: 7\n",
		"model.chat_format": strings.Replace(good, "spec: gguf:models/m.gguf", "spec: gguf:models/m.gguf\n  chat_format: qa", 1),
	} {
		if hash(doc, Overrides{}) == base {
			t.Errorf("%s leaves config_hash alone", name)
		}
	}
}

// TestDedupCorpusFromEnv: MB_DEDUP_CORPUS fires the hard-exclude when the
// config names no corpus (spec §6), and says so; a config's corpus wins.
func TestDedupCorpusFromEnv(t *testing.T) {
	t.Setenv("MB_DEDUP_CORPUS", "/train/a.jsonl, s3://bucket/web/ /train/*.gz")
	c, err := Parse([]byte(good), "c.yaml", "/cfg", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Dedup.Corpus, "|") != "/train/a.jsonl|s3://bucket/web/|/train/*.gz" || c.Dedup.CorpusFrom != "MB_DEDUP_CORPUS" {
		t.Errorf("corpus %q from %q", c.Dedup.Corpus, c.Dedup.CorpusFrom)
	}
	c, err = Parse([]byte(good+"dedup:\n  corpus: [mine.jsonl]\n"), "c.yaml", "/cfg", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Dedup.Corpus, "|") != "/cfg/mine.jsonl" || c.Dedup.CorpusFrom != "" {
		t.Errorf("config corpus %q from %q", c.Dedup.Corpus, c.Dedup.CorpusFrom)
	}
}
