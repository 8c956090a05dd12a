package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/infra/runplan"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers/checks/dedup"
	"github.com/rs/zerolog"
	"go.temporal.io/sdk/testsuite"
)

func TestDedupCommand(t *testing.T) {
	dir := t.TempDir()
	items := filepath.Join(dir, "items.jsonl")
	os.WriteFile(items, []byte(`{"id":"k/1","axis":"knowledge","prompt":"Apakah nama gunung yang paling tinggi di Malaysia dan di negeri manakah ia terletak?"}
{"id":"k/2","axis":"knowledge","task_id":"t","prompt":"Siapakah yang menulis novel Salina dan pada tahun berapakah novel itu diterbitkan?"}
{"id":"k/3","axis":"knowledge","task_id":"t","prompt":"Nyatakan dua sebab utama hujan lebat berlaku semasa musim tengkujuh di pantai timur."}
{"id":"m/1","axis":"mt","prompt":"Selamat pagi"}
`), 0o644)
	os.MkdirAll(filepath.Join(dir, "corpus", "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "corpus", "a.txt"), []byte("Pengenalan.\n\nSOALAN: Siapakah yang menulis  novel Salina dan pada tahun berapakah novel itu diterbitkan? Jawapan: A. Samad Said.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "corpus", "sub", "b.jsonl"), []byte(`{"text":"selamat   PAGI"}`+"\n"), 0o644)

	out, code := captureStdout(t, func() int {
		return runDedup([]string{"--items", items, "--corpus", filepath.Join(dir, "corpus"), "--json"})
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var rep dedup.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Items != 4 || rep.Kept != 1 || rep.Dropped != 3 || len(rep.Corpus) != 2 || len(rep.Corpus[0].SHA256) != 64 {
		t.Fatalf("report: %+v", rep)
	}
	if want := dedup.KeptSHA256([]string{"k/1"}); rep.KeptSHA256 != want {
		t.Fatalf("kept sha %s, want %s", rep.KeptSHA256, want)
	}
	kinds := map[string]string{}
	for _, d := range rep.Drops {
		kinds[d.ItemID] = d.Kind
	}
	if kinds["k/2"] != "exact" || kinds["k/3"] != "task" || kinds["m/1"] != "whole" {
		t.Fatalf("drops %v", kinds)
	}

	text, code := captureStdout(t, func() int {
		return runDedup([]string{"--items", items, filepath.Join(dir, "corpus", "*.txt")})
	})
	if code != 0 || !strings.Contains(text, "kept 2, dropped 2") || !strings.Contains(text, "task t: k/2 matched") {
		t.Fatalf("exit %d, text report:\n%s", code, text)
	}

	// Errors: exit 1 with a message naming the file; usage errors exit 2.
	os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte("{\"id\":\"x\"}\n"), 0o644)
	if _, code := captureStdout(t, func() int {
		return runDedup([]string{"--items", filepath.Join(dir, "bad.jsonl"), "--corpus", filepath.Join(dir, "corpus")})
	}); code != 1 {
		t.Errorf("bad items: exit %d", code)
	}
	if _, code := captureStdout(t, func() int { return runDedup([]string{"--items", items}) }); code != 2 {
		t.Errorf("no corpus: exit %d", code)
	}
	if _, code := captureStdout(t, func() int {
		return runDedup([]string{"--items", items, "--corpus", filepath.Join(dir, "nothing*")})
	}); code != 1 {
		t.Errorf("missing corpus: exit %d", code)
	}
}

// dedupRun prepares and dedups a run of cfgPath through the activities, as
// EvalRun does, and returns what the run publishes. between, if any, runs
// after Prepare.
func dedupRun(t *testing.T, cfgPath, runID string, between ...func()) runfiles.DedupResult {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	acts := activities.New(zerolog.Nop())
	acts.RegisterCPU(env)
	v, err := env.ExecuteActivity(acts.Prepare, activities.PrepareInput{RunID: runID, ConfigPath: cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	var plan activities.Plan
	v.Get(&plan)
	for _, f := range between {
		f()
	}
	v, err = env.ExecuteActivity(acts.Dedup, activities.RunRef{RunID: runID, StoreURI: plan.StoreURI})
	if err != nil {
		t.Fatal(err)
	}
	var dd runfiles.DedupResult
	v.Get(&dd)
	return dd
}

// TestDedupConfigMatchesRun: `dedup --items CONFIG` screens the items a run
// of that config loads and prints the kept SHA-256 the run publishes, for a
// local corpus and (with a server) the same corpus on S3.
func TestDedupConfigMatchesRun(t *testing.T) {
	data, _ := filepath.Abs("../../testdata/data")
	dir := t.TempDir()
	writeConfig := func(name, dedupSection string) string {
		p := filepath.Join(dir, name)
		text := fmt.Sprintf(`model: {spec: "openai:http://127.0.0.1:1", id: m}
store: {uri: %s}
axes:
  knowledge:
    datasets:
      - {name: g, path: %s/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, limit: 25}
  nlu:
    datasets:
      - {name: b, path: %s/belebele_ms_en/ms_belebele.jsonl, format: belebele, limit: 20}
%s`, filepath.Join(dir, "store"), data, data, dedupSection)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Plant one knowledge prompt (re-spaced, upper-cased) and one nlu prompt.
	cfg, err := config.Load(writeConfig("plain.yaml", ""), config.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	axes, _, err := runplan.LoadAxes(cfg, runplan.ModelMeta(cfg))
	if err != nil || len(axes) != 2 {
		t.Fatalf("axes %v, %v", axes, err)
	}
	k, n := axes[0].Items[3], axes[1].Items[7]
	corpusText := "Pengenalan.\n\n" + strings.ToUpper(strings.Join(strings.Fields(k.Prompt), "   ")) +
		"\n\nteks lain\n\nPetikan: " + strings.Join(strings.Fields(n.Prompt), " ") + "\n" // one document: no blank lines
	corpusDir := filepath.Join(dir, "corpus")
	os.MkdirAll(corpusDir, 0o755)
	os.WriteFile(filepath.Join(corpusDir, "c.txt"), []byte(corpusText), 0o644)
	localCfg := writeConfig("local.yaml", fmt.Sprintf("dedup: {corpus: [%s]}\n", corpusDir))

	// A file added to the corpus after Prepare listed it is not screened:
	// the run's shards and fingerprints come from Prepare's stored listing.
	late := filepath.Join(corpusDir, "late.txt")
	dd := dedupRun(t, localCfg, "local", func() { os.WriteFile(late, []byte(corpusText), 0o644) })
	if strings.Contains(dd.Corpus, "late.txt") || !strings.Contains(dd.Corpus, "c.txt") {
		t.Errorf("run corpus %q: want c.txt as listed by Prepare, not late.txt", dd.Corpus)
	}
	os.Remove(late)
	report := func(t *testing.T, args ...string) dedup.Report {
		t.Helper()
		out, code := captureStdout(t, func() int { return runDedup(append(args, "--json")) })
		var rep dedup.Report
		if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
			t.Fatalf("dedup %v: exit %d, %v\n%s", args, code, err, out)
		}
		return rep
	}
	check := func(t *testing.T, name string, rep dedup.Report, run runfiles.DedupResult) {
		t.Helper()
		if rep.KeptSHA256 != run.KeptSHA256 || rep.KeptSHA256 == dedup.KeptSHA256(nil) {
			t.Errorf("%s: kept sha %s, the run published %s", name, rep.KeptSHA256, run.KeptSHA256)
		}
		if rep.Items != 45 || rep.Dropped != 2 || len(rep.Axes) != len(run.Axes) {
			t.Fatalf("%s: report %d items, %d dropped, axes %+v", name, rep.Items, rep.Dropped, rep.Axes)
		}
		dropped := map[string]bool{}
		for _, d := range rep.Drops {
			dropped[d.ItemID] = true
		}
		if !dropped[k.ID] || !dropped[n.ID] {
			t.Errorf("%s: drops %v, want %s and %s", name, rep.Drops, k.ID, n.ID)
		}
		byAxis := map[string]dedup.AxisReport{}
		for _, a := range rep.Axes {
			byAxis[a.Axis] = a
		}
		for _, ra := range run.Axes {
			a := byAxis[ra.Axis]
			if a.Kept != ra.Kept || a.Dropped != ra.Dropped || a.ContaminationRate == nil || ra.ContaminationRate == nil || *a.ContaminationRate != *ra.ContaminationRate {
				t.Errorf("%s: axis %s: cli %+v, run %+v", name, ra.Axis, a, ra)
			}
		}
	}
	// The corpus from the config, then from --corpus.
	check(t, "config corpus", report(t, "--items", localCfg), dd)
	rep := report(t, "--items", writeConfig("plain.yaml", ""), "--corpus", corpusDir)
	check(t, "--corpus", rep, dd)
	if len(rep.Corpus) != 1 || len(rep.Corpus[0].SHA256) != 64 {
		t.Errorf("fingerprints %+v", rep.Corpus)
	}
	text, code := captureStdout(t, func() int { return runDedup([]string{"--items", localCfg}) })
	if code != 0 || !strings.Contains(text, "kept sha256: "+dd.KeptSHA256) || !strings.Contains(text, "c.txt  ") {
		t.Errorf("text report: exit %d\n%s", code, text)
	}
	// A config (any extension) is told from JSONL by its content.
	noExt := filepath.Join(dir, "config-without-extension")
	b, _ := os.ReadFile(localCfg)
	os.WriteFile(noExt, b, 0o644)
	check(t, "no extension", report(t, "--items", noExt), dd)
	if _, code := captureStdout(t, func() int { return runDedup([]string{"--items", writeConfig("plain.yaml", "")}) }); code != 2 {
		t.Errorf("config without corpus: exit %d, want 2", code)
	}

	// The same corpus in S3, screened by a run and by the command.
	t.Run("s3", func(t *testing.T) {
		endpoint, bucket := os.Getenv("GLOSSOBENCH_S3_ENDPOINT"), os.Getenv("GLOSSOBENCH_S3_BUCKET")
		if endpoint == "" || bucket == "" {
			t.Skip("GLOSSOBENCH_S3_ENDPOINT / GLOSSOBENCH_S3_BUCKET not set")
		}
		prefix := fmt.Sprintf("dedup-cli-test/%d", time.Now().UnixNano())
		st, err := store.NewS3(context.Background(), store.S3Config{Endpoint: endpoint, Bucket: bucket, Prefix: prefix, Region: "us-east-1",
			PathStyle: true, AccessKeyEnv: "AWS_ACCESS_KEY_ID", SecretKeyEnv: "AWS_SECRET_ACCESS_KEY"})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.EnsureBucket(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := st.Put(context.Background(), "corpus/c.txt", []byte(corpusText)); err != nil {
			t.Fatal(err)
		}
		entry := fmt.Sprintf("s3://%s/%s/corpus/?endpoint=%s&region=us-east-1&path_style=true&access_key_env=AWS_ACCESS_KEY_ID&secret_key_env=AWS_SECRET_ACCESS_KEY", bucket, prefix, endpoint)
		s3Cfg := writeConfig("s3.yaml", fmt.Sprintf("dedup: {corpus: [%q]}\n", entry))
		ddS3 := dedupRun(t, s3Cfg, "s3")
		if ddS3.KeptSHA256 != dd.KeptSHA256 || !strings.Contains(ddS3.Corpus, "etag") {
			t.Errorf("S3 run: kept sha %s (local %s), corpus %q", ddS3.KeptSHA256, dd.KeptSHA256, ddS3.Corpus)
		}
		rep = report(t, "--items", s3Cfg)
		check(t, "S3 corpus", rep, ddS3)
		if len(rep.Corpus) != 1 || rep.Corpus[0].ETag == "" || rep.Corpus[0].Size != int64(len(corpusText)) {
			t.Errorf("S3 fingerprints %+v", rep.Corpus)
		}
	})
}

// TestDedupBenchGrepReadsWholeCorpus: the grep baseline of dedup --bench
// must read the whole corpus. GNU grep writing to /dev/null stops at the
// first match, so the bench reads grep's count through a pipe and prints
// it: with a copy planted on the first line and 499 more down to the last,
// grep must count all 500, and so must ripgrep when it is installed. With
// --planted each engine says how many planted items it found.
func TestDedupBenchGrepReadsWholeCorpus(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("no grep")
	}
	dir := t.TempDir()
	prompt := "Siapakah yang menulis novel Salina dan pada tahun berapakah novel itu diterbitkan?"
	items := filepath.Join(dir, "items.jsonl")
	os.WriteFile(items, []byte(`{"id":"k/1","axis":"knowledge","prompt":"`+prompt+`"}`+"\n"), 0o644)
	var b strings.Builder
	for i := range 5000 {
		if i%10 == 0 {
			fmt.Fprintf(&b, "%d. %s\n\n", i, prompt)
		} else {
			fmt.Fprintf(&b, "%d. Perenggan biasa tentang cuaca di pantai timur.\n\n", i)
		}
	}
	corpusPath := filepath.Join(dir, "corpus.txt")
	os.WriteFile(corpusPath, []byte(b.String()), 0o644)
	planted := filepath.Join(dir, "planted.tsv")
	os.WriteFile(planted, []byte("k/1\tverbatim\n"), 0o644)
	out, code := captureStdout(t, func() int {
		return runDedup([]string{"--items", items, "--corpus", corpusPath, "--bench", "--planted", planted})
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	want := []string{"glossobench dedup: 1 items matched; planted items found: 1 of 1 (verbatim 1/1)"}
	for _, e := range []struct{ name, bin string }{{"grep", "grep"}, {"ripgrep", "rg"}} {
		if _, err := exec.LookPath(e.bin); err == nil {
			want = append(want, e.name+": 500 matching lines", "no normalisation); planted items found: 1 of 1 (verbatim 1/1)")
		} else {
			want = append(want, e.bin+": not on PATH")
		}
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("want %q in:\n%s", w, out)
		}
	}
	if !strings.Contains(out, "peak RSS of glossobench dedup --bench:") {
		t.Fatalf("no peak RSS line:\n%s", out)
	}
}
