package runner_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/glossobench/glossobench/infra/store/storetest"
	"github.com/glossobench/glossobench/workflows"
)

// TestDeclarativeDatasetsThroughEvalRun runs one EvalRun whose Knowledge
// axis is declared in YAML alone over three sources: a MalayMMLU-shaped
// CSV, a Parquet file and an hf:// file served by a local stand-in for the
// Hub (resolve URL, redirect to a CDN host, X-Linked-Etag), pinned by
// SHA-256 and fetched into a cache.
func TestDeclarativeDatasetsThroughEvalRun(t *testing.T) {
	c := serverWithInstantWorkers(t)

	dir := t.TempDir()
	type rec struct {
		Soalan  string   `parquet:"soalan"`
		Pilihan []string `parquet:"pilihan,list"`
		Jawapan int64    `parquet:"jawapan"`
		Bidang  string   `parquet:"bidang"`
	}
	var recs []rec
	for i := range 7 {
		recs = append(recs, rec{Soalan: fmt.Sprintf("Berapakah %d tambah %d?", i, i), Pilihan: []string{fmt.Sprint(2 * i), fmt.Sprint(2*i + 1), fmt.Sprint(2*i + 2)}, Jawapan: 0, Bidang: "matematik"})
	}
	var pq bytes.Buffer
	if err := parquet.Write(&pq, recs); err != nil {
		t.Fatal(err)
	}
	pqPath := filepath.Join(dir, "soalan.parquet")
	os.WriteFile(pqPath, pq.Bytes(), 0o644)

	hubFile := []byte(`{"qid": "h1", "text": "Ibu negara Malaysia?", "options": ["Kuala Lumpur", "Ipoh"], "gold": "Kuala Lumpur"}` + "\n" +
		`{"qid": "h2", "text": "Negeri paling luas?", "options": ["Perlis", "Sarawak"], "gold": "Sarawak"}` + "\n")
	sum := sha256.Sum256(hubFile)
	pin := hex.EncodeToString(sum[:])
	hits := 0
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		switch r.URL.Path {
		case "/datasets/acme/soalan-ms/resolve/0123abc/data/test.jsonl":
			_, port, _ := strings.Cut(r.Host, ":")
			w.Header().Set("X-Linked-Etag", `"`+pin+`"`)
			http.Redirect(w, r, "http://localhost:"+port+"/cdn/blob", http.StatusFound)
		case "/cdn/blob":
			w.Write(hubFile)
		default:
			http.NotFound(w, r)
		}
	}))
	defer hub.Close()
	t.Setenv("HF_ENDPOINT", hub.URL)
	t.Setenv("GLOSSOBENCH_HF_CACHE", filepath.Join(dir, "hf-cache"))

	csvPath := filepath.Join(repoRoot(t), "testdata", "suites", "data", "malaymmlu_sample.csv")
	cfg := fmt.Sprintf(`model: {spec: "openai:http://instant", id: instant}
store: {uri: %s}
run: {shard_size: 5, bootstrap_resamples: 50}
axes:
  knowledge:
    scoring_mode: generate
    datasets:
      - name: malaymmlu
        path: %s
        format: mcq
        lang: ms
        fields: {id: id, question: question, choices: [A, B, C, D, E], answer: key, answer_as: letter, source: subject}
      - name: parquet_set
        path: %s
        format: mcq
        lang: ms
        fields: {question: "{{.soalan}} ({{.bidang}})", choices: pilihan, answer: jawapan, answer_as: index}
      - name: hub_set
        path: hf://datasets/acme/soalan-ms@0123abc/data/test.jsonl
        sha256: %s
        format: mcq
        lang: ms
        fields: {id: qid, question: text, choices: options, answer: gold, answer_as: text}
`, filepath.Join(dir, "store"), csvPath, pqPath, pin)

	res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "declarative"})
	r := readResult(t, res.Summary.ResultPath)
	ax := r.Axes["knowledge"]
	if ax.N != 12+7+2 || ax.Score == nil {
		t.Fatalf("knowledge: n %d (want 21), score %v", ax.N, ax.Score)
	}
	items, err := os.ReadFile(filepath.Join(dir, "store", "runs", "declarative", "knowledge", "items.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"id":"malaymmlu/2"`, `"id":"parquet_set/3"`, `"id":"hub_set/h2"`, `Berapakah 2 tambah 2? (matematik)`, `"source":"Sejarah"`} {
		if !bytes.Contains(items, []byte(want)) {
			t.Errorf("items.jsonl lacks %s", want)
		}
	}
	if hits != 2 {
		t.Errorf("the hub saw %d requests, want 2 (resolve and redirect, once)", hits)
	}
}

// TestGenerativeDatasetsThroughEvalRun runs one EvalRun whose NLG, IF and
// MT axes read datasets declared in YAML alone (a CSV of sentence pairs,
// IFEval-shaped JSONL rows under other column names, multi-turn
// conversations with string ids), beside the built-in IFEval file as a
// preset whose rows state their register through fields.register.
func TestGenerativeDatasetsThroughEvalRun(t *testing.T) {
	c := serverWithInstantWorkers(t)

	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pairs := write("pasangan.csv", "no,en,ms\n1,Good morning.,Selamat pagi.\n2,Thank you.,Terima kasih.\n3,Where is the station?,Di manakah stesen?\n")
	arahan := write("arahan.jsonl",
		`{"kod": "a1", "teks": "Tulis ayat tanpa koma.", "senarai": ["punctuation:no_comma"], "hujah": [{}], "laras": "MID"}`+"\n"+
			`{"kod": "a2", "teks": "Jawab dengan huruf besar.", "senarai": ["change_case:english_capital"], "hujah": [{}], "laras": "LOW"}`+"\n")
	ifeval := write("input_data.jsonl",
		`{"key": 1, "prompt": "Write without commas.", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}], "reg": "HIGH"}`+"\n")
	convo := write("perbualan.jsonl",
		`{"kod": "ms-1", "jenis": "writing", "giliran": ["Tulis pantun.", "Terangkan maksudnya."]}`+"\n"+
			`{"kod": "ms-2", "jenis": "math", "giliran": ["Berapa 2+2?"], "rujukan": ["4"]}`+"\n")
	cfg := fmt.Sprintf(`model: {spec: "openai:http://instant", id: instant}
store: {uri: %s}
run: {shard_size: 5, bootstrap_resamples: 50}
axes:
  nlg:
    datasets:
      - name: pasangan
        path: %s
        format: nlg
        lang: en-ms
        fields: {id: "no", prompt: "Terjemahkan ke Bahasa Melayu:\n{{.en}}", text: en, references: ms}
  if:
    datasets:
      - name: arahan
        path: %s
        format: if
        lang: ms
        fields: {id: kod, prompt: teks, instruction_ids: senarai, kwargs: hujah, register: laras}
      - name: ifeval
        path: %s
        format: ifeval
        fields: {register: reg}
  mt:
    datasets:
      - name: perbualan
        path: %s
        format: mt
        lang: ms
        fields: {id: kod, category: jenis, turns: giliran, references: "rujukan?"}
judges:
  - {name: j, family: j, spec: "openai:http://judge"}
`, filepath.Join(dir, "store"), pairs, arahan, ifeval, convo)

	res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "generative"})
	r := readResult(t, res.Summary.ResultPath)
	if ax := r.Axes["nlg"]; ax.N != 3 || ax.Score == nil {
		t.Errorf("nlg: n %d, score %v", ax.N, ax.Score)
	}
	if ax := r.Axes["if"]; ax.N != 3 || ax.Score == nil || ax.Profile.Register != "HIGH, LOW, MID" {
		t.Errorf("if: n %d, score %v, register %q", ax.N, ax.Score, ax.Profile.Register)
	}
	// The stand-in judge's replies do not parse: both conversations were
	// answered and judged, none rated.
	if ax := r.Axes["mt"]; !strings.Contains(strings.Join(ax.Notes, "; "), "2 items had no valid judge rating") {
		t.Errorf("mt: n %d, metric %s, notes %v", ax.N, ax.Metric, ax.Notes)
	}
	if ax := r.Axes["nlg"]; ax.Profile.Register != "unstated" {
		t.Errorf("nlg register %q, want unstated", ax.Profile.Register)
	}
	read := func(axis string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, "store", "runs", "generative", axis, "items.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for axis, wants := range map[string][]string{
		"nlg": {`"id":"pasangan/3"`, `"references":["Di manakah stesen?"]`, `Terjemahkan ke Bahasa Melayu:\nThank you.`, `"direction":"en-ms"`},
		"if":  {`"id":"arahan/a2"`, `"register":"LOW"`, `"id":"ifeval/1"`, `"register":"HIGH"`, `"instruction_id_list":["change_case:english_capital"]`},
		"mt":  {`"id":"perbualan/ms-1"`, `"turns":["Tulis pantun.","Terangkan maksudnya."]`, `"references":["4"]`},
	} {
		items := read(axis)
		for _, want := range wants {
			if !bytes.Contains(items, []byte(want)) {
				t.Errorf("%s items.jsonl lacks %s", axis, want)
			}
		}
	}
}

// TestS3DatasetThroughEvalRun runs one EvalRun whose NLU and IF datasets
// are s3:// objects on a real S3 server (versitygw; the test skips without
// GLOSSOBENCH_S3_ENDPOINT): a belebele preset file and a CSV of IF rows
// declared by fields, the IF file pinned by SHA-256.
func TestS3DatasetThroughEvalRun(t *testing.T) {
	s3 := storetest.S3Config(t)
	st := storetest.OpenS3(t, s3)
	endpoint, bucket, prefix := s3.Endpoint, s3.Bucket, s3.Prefix
	ctx := context.Background()
	belebele, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "data", "belebele_ms_en", "ms_belebele.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ifRows := []byte("kod,arahan,ids,hujah\nk1,Tulis tanpa koma.,\"[\"\"punctuation:no_comma\"\"]\",[{}]\nk2,Jawab dalam huruf kecil.,\"[\"\"change_case:english_lowercase\"\"]\",[{}]\n")
	for key, data := range map[string][]byte{"sets/ms_belebele.jsonl": belebele, "sets/arahan.csv": ifRows} {
		if err := st.Put(ctx, key, data); err != nil {
			t.Fatal(err)
		}
	}
	sum := sha256.Sum256(ifRows)
	q := "?endpoint=" + endpoint + "&region=us-east-1&path_style=true&access_key_env=AWS_ACCESS_KEY_ID&secret_key_env=AWS_SECRET_ACCESS_KEY"
	uri := func(key string) string { return "s3://" + bucket + "/" + prefix + "/sets/" + key + q }

	c := serverWithInstantWorkers(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`model: {spec: "openai:http://instant", id: instant}
store: {uri: %s}
run: {shard_size: 10, bootstrap_resamples: 50}
axes:
  nlu:
    scoring_mode: generate
    datasets:
      - {name: belebele_ms, path: %q, format: belebele, lang: ms, limit: 12}
  if:
    datasets:
      - name: arahan
        path: %q
        sha256: %s
        lang: ms
        fields: {id: kod, prompt: arahan, instruction_ids: ids, kwargs: hujah}
`, filepath.Join(dir, "store"), uri("ms_belebele.jsonl"), uri("arahan.csv"), hex.EncodeToString(sum[:]))
	res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "s3-datasets"})
	r := readResult(t, res.Summary.ResultPath)
	if ax := r.Axes["nlu"]; ax.N != 12 || ax.Score == nil {
		t.Errorf("nlu: n %d, score %v", ax.N, ax.Score)
	}
	if ax := r.Axes["if"]; ax.N != 2 || ax.Score == nil {
		t.Errorf("if: n %d, score %v", ax.N, ax.Score)
	}
}
