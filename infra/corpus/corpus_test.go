package corpus

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/glossobench/glossobench/scorers/checks/dedup"
	"github.com/glossobench/glossobench/scorers/checks/dedup/deduptest"
)

func scanString(t *testing.T, idx *dedup.Index, name, data string, shardBytes int64) []dedup.Match {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, err := ExpandLocal([]string{p}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	ms, _, _, err := Scanner{Index: idx}.ScanAll(context.Background(), Plan(srcs, shardBytes), 2)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func matchKinds(ms []dedup.Match) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		out[m.ItemID] = m.Kind
	}
	return out
}

func TestJSONLAndCompression(t *testing.T) {
	items := deduptest.PlantedItems()
	idx, err := dedup.NewIndex(items, dedup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := matchKinds(scanString(t, idx, "corpus.txt", deduptest.PlantedCorpus(), 0))

	var jl bytes.Buffer
	for i, doc := range strings.Split(strings.TrimSpace(deduptest.PlantedCorpus()), "\n\n") {
		b, _ := json.Marshal(map[string]any{"id": i, "meta": map[string]any{"content": "x"}, "content": doc})
		jl.Write(b)
		jl.WriteString("\n")
	}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(jl.Bytes())
	zw.Close()
	enc, _ := zstd.NewWriter(nil)
	zst := enc.EncodeAll([]byte(deduptest.PlantedCorpus()), nil)
	for _, p := range []string{
		write("c.jsonl", jl.Bytes()),
		write("c.jsonl.gz", gz.Bytes()),
		write("c.txt.zst", zst),
	} {
		srcs, err := ExpandLocal([]string{p}, "", "content")
		if err != nil {
			t.Fatal(err)
		}
		for _, shard := range []int64{0, 50} {
			ms, _, _, err := Scanner{Index: idx}.ScanAll(context.Background(), Plan(srcs, shard), 2)
			if err != nil {
				t.Fatal(err)
			}
			if got := matchKinds(ms); !reflect.DeepEqual(got, want) {
				t.Errorf("%s shard %d: %v\nwant %v", filepath.Base(p), shard, got, want)
			}
		}
	}

	bom := write("bom.jsonl", []byte("\ufeff{\"content\": \"Terjemahkan: selamat pagi\"}\n"))
	srcs, _ := ExpandLocal([]string{bom}, "", "content")
	if ms, _, _, err := (Scanner{Index: idx}).ScanAll(context.Background(), Plan(srcs, 0), 1); err != nil || len(ms) != 1 {
		t.Errorf("JSONL with a byte order mark: %v %v", ms, err)
	}

	bad := write("bad.jsonl", []byte("{\"content\": \"ok\"}\n{\"content\": 5}\n"))
	srcs, _ = ExpandLocal([]string{bad}, "", "content")
	_, _, _, err = Scanner{Index: idx}.ScanAll(context.Background(), Plan(srcs, 0), 1)
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl: line at offset 18") {
		t.Errorf("bad JSONL: err = %v", err)
	}
}

func TestShardCountInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	items, docs := deduptest.RandomCase(r, 200, 600)
	idx, err := dedup.NewIndex(items, dedup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(docs, "\n\n\r\n") + "\n"
	var lines bytes.Buffer
	for _, d := range docs {
		lines.WriteString(strings.ReplaceAll(d, "\n", " ") + "\n")
	}
	for _, c := range []struct{ name, data string }{{"c.txt", text}, {"c.lines", lines.String()}} {
		var ref []dedup.Match
		var refSHA string
		for _, shard := range []int64{0, 100003, 4096, 333, 17} {
			data := c.data
			format := ""
			if strings.HasSuffix(c.name, ".lines") {
				format = FormatLines
			}
			dir := t.TempDir()
			p := filepath.Join(dir, c.name)
			os.WriteFile(p, []byte(data), 0o644)
			srcs, _ := ExpandLocal([]string{p}, format, "")
			ms, _, nbytes, err := Scanner{Index: idx}.ScanAll(context.Background(), Plan(srcs, shard), 3)
			if err != nil {
				t.Fatal(err)
			}
			for i := range ms {
				ms[i].URI = "" // temp dir differs
			}
			sha := dedup.Summarize(items, ms, []dedup.Fingerprint{{URI: "x"}}, dedup.Options{}).KeptSHA256
			if ref == nil {
				ref, refSHA = ms, sha
				if len(ref) == 0 || nbytes == 0 {
					t.Fatalf("%s: no matches", c.name)
				}
				continue
			}
			if !reflect.DeepEqual(ms, ref) {
				t.Errorf("%s shard %d: %d matches differ from the one-shard scan (%d)", c.name, shard, len(ms), len(ref))
			}
			if sha != refSHA {
				t.Errorf("%s shard %d: kept sha %s, want %s", c.name, shard, sha, refSHA)
			}
		}
	}
}

func TestResumeAfterKill(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	items, docs := deduptest.RandomCase(r, 200, 2000)
	idx, _ := dedup.NewIndex(items, dedup.Options{})
	dir := t.TempDir()
	data := strings.Join(docs, "\n\n")
	for _, name := range []string{"c.txt", "c.txt.gz"} {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, ".gz") {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write([]byte(data))
			zw.Close()
			os.WriteFile(p, b.Bytes(), 0o644)
		} else {
			os.WriteFile(p, []byte(data), 0o644)
		}
		srcs, _ := ExpandLocal([]string{p}, "", "")
		sh := Plan(srcs, 0)[0]
		sc := Scanner{Index: idx, ProgressEvery: 2000}
		full, err := sc.ScanShard(context.Background(), sh, Checkpoint{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, killAt := range []int{1, 5, 20} {
			// Run until the killAt-th heartbeat, then "crash".
			ctx, cancel := context.WithCancel(context.Background())
			var last Checkpoint
			beats := 0
			_, err := sc.ScanShard(ctx, sh, Checkpoint{}, func(c Checkpoint) {
				beats++
				if beats <= killAt {
					last = c
				}
				if beats == killAt {
					cancel()
				}
			})
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: killed scan err = %v", name, err)
			}
			// Round-trip through JSON, as a heartbeat would.
			b, _ := json.Marshal(last)
			var cp Checkpoint
			json.Unmarshal(b, &cp)
			if cp.Offset <= 0 || cp.Offset >= int64(len(data)) {
				t.Fatalf("%s: checkpoint offset %d", name, cp.Offset)
			}
			res, err := sc.ScanShard(context.Background(), sh, cp, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res, full) {
				t.Errorf("%s killed at beat %d (offset %d): resumed result differs: %d matches %d docs, want %d matches %d docs",
					name, killAt, cp.Offset, len(res.Matches), res.Docs, len(full.Matches), full.Docs)
			}
		}
	}
}

// docsOf lists (start, text) of the documents a reader sees in [from, end).
func docsOf(t testing.TB, data []byte, format string, from, end int64) []string {
	open := func(ctx context.Context, _ Source, off, _ int64) (io.ReadCloser, int64, error) {
		return io.NopCloser(bytes.NewReader(data[off:])), int64(len(data)), nil
	}
	src := Source{URI: "mem", Size: int64(len(data)), Format: format, TextField: "t"}
	dr, closer, err := newDocReader(context.Background(), open, src, from, end, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	var out []string
	for {
		doc, s, _, err := dr.next()
		if err != nil {
			break
		}
		out = append(out, fmt.Sprintf("%d:%q", s, doc))
	}
	return out
}

func TestDocSplitting(t *testing.T) {
	data := []byte("\n\r\nA1\nA2\n\nB1\r\n\r\nC1\n \nC2\n\n\n\nD1")
	want := []string{`3:"A1\nA2\n"`, `10:"B1\r\n"`, `16:"C1\n \nC2\n"`, `27:"D1"`}
	if got := docsOf(t, data, FormatText, 0, -1); !reflect.DeepEqual(got, want) {
		t.Fatalf("text docs %v\nwant %v", got, want)
	}
	wantLines := []string{`3:"A1\n"`, `6:"A2\n"`, `10:"B1\r\n"`, `16:"C1\n"`, `19:" \n"`, `21:"C2\n"`, `27:"D1"`}
	if got := docsOf(t, data, FormatLines, 0, -1); !reflect.DeepEqual(got, wantLines) {
		t.Fatalf("lines docs %v\nwant %v", got, wantLines)
	}
}

// FuzzDocSplit: the documents of [0,k) and [k,end) are those of [0,end).
func FuzzDocSplit(f *testing.F) {
	f.Add([]byte("a\n\nb\nc\n\n\nd"), uint16(3), false)
	f.Add([]byte("\r\n\r\nx\r\n\r\ny"), uint16(4), true)
	f.Add([]byte("x\ny\n\n"), uint16(0), false)
	f.Fuzz(func(t *testing.T, data []byte, k uint16, lines bool) {
		format := FormatText
		if lines {
			format = FormatLines
		}
		split := int64(k) % int64(len(data)+1)
		whole := docsOf(t, data, format, 0, -1)
		parts := append(docsOf(t, data, format, 0, split), docsOf(t, data, format, split, -1)...)
		if !reflect.DeepEqual(whole, parts) {
			t.Fatalf("split at %d: %v\nwhole: %v", split, parts, whole)
		}
	})
}

func FuzzJSONField(f *testing.F) {
	f.Add([]byte(`{"text": "hello \u00e9 \ud83d\ude00 \"q\"", "n": [1, {"text": 2}]}`))
	f.Add([]byte(`{"a":1,"text":"x","text":"y"}`))
	f.Add([]byte(`{"text":null}`))
	f.Add([]byte(`{"te\u0078t":"\ud800 lone","b":true}` + "\n"))
	f.Add([]byte("{\"text\":\"bad \xff utf8\"}"))
	f.Fuzz(func(t *testing.T, line []byte) {
		got, found, err := appendJSONField(nil, line, []byte("text"))
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			return // invalid JSON: any error or answer is fine, but no panic
		}
		if err != nil {
			t.Fatalf("valid JSON %q: error %v", line, err)
		}
		s, isStr := m["text"].(string)
		if found != isStr || (found && string(got) != s) {
			t.Fatalf("%q: got %q found=%v, encoding/json says %q %v", line, got, found, s, isStr)
		}
	})
}

func TestFingerprintAndExpand(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "c", ".hidden"), 0o755)
	os.WriteFile(filepath.Join(dir, "c", "x.txt"), []byte("abc"), 0o644)
	os.WriteFile(filepath.Join(dir, "c", "y.jsonl.zst"), []byte{}, 0o644)
	os.WriteFile(filepath.Join(dir, "c", ".hidden", "z.txt"), []byte("no"), 0o644)
	srcs, err := ExpandLocal([]string{filepath.Join(dir, "c"), filepath.Join(dir, "c", "*.txt")}, "", "body")
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].Format != FormatText || srcs[1].Format != FormatJSONL || srcs[1].Compression != "zstd" || srcs[1].TextField != "body" {
		t.Fatalf("sources %+v", srcs)
	}
	if sh := Plan(srcs, 1); len(sh) != 3 { // "abc" in 1-byte shards; the empty file has none
		t.Fatalf("plan %v", sh)
	}
	fp, err := FingerprintSource(context.Background(), nil, srcs[0])
	// sha256("abc"), FIPS 180-2 appendix B.1.
	if err != nil || fp.Size != 3 || fp.SHA256 != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("fingerprint %+v %v", fp, err)
	}
	if _, err := NewSource("x.parquet", 1, "parquet", ""); err == nil {
		t.Fatal("unknown format accepted")
	}
	if _, err := ExpandLocal([]string{filepath.Join(dir, "none*")}, "", ""); err == nil {
		t.Fatal("empty glob accepted")
	}
}

func TestScanErrors(t *testing.T) {
	idx, _ := dedup.NewIndex(deduptest.PlantedItems(), dedup.Options{})
	dir := t.TempDir()
	good := filepath.Join(dir, "a.txt")
	os.WriteFile(good, []byte(deduptest.PlantedCorpus()), 0o644)
	bad := filepath.Join(dir, "b.txt.gz")
	os.WriteFile(bad, []byte("not gzip"), 0o644)
	srcs, _ := ExpandLocal([]string{good, bad}, "", "")
	_, _, _, err := Scanner{Index: idx}.ScanAll(context.Background(), Plan(srcs, 100), 2)
	if err == nil || !strings.Contains(err.Error(), "b.txt.gz: gzip") {
		t.Fatalf("err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srcs, _ = ExpandLocal([]string{good}, "", "")
	if _, _, _, err := (Scanner{Index: idx}).ScanAll(ctx, Plan(srcs, 100), 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
	// A document over MaxDocBytes is an error naming its offset.
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, []byte("x\n\n"+strings.Repeat("y ", 100)), 0o644)
	srcs, _ = ExpandLocal([]string{big}, "", "")
	_, err = Scanner{Index: idx, MaxDocBytes: 50}.ScanShard(context.Background(), Plan(srcs, 0)[0], Checkpoint{}, nil)
	if err == nil || !strings.Contains(err.Error(), "big.txt: line at offset 3 is longer than 50 bytes") {
		t.Fatalf("long document: err = %v", err)
	}
	// A checkpoint naming an unknown item is refused.
	_, err = Scanner{Index: idx}.ScanShard(context.Background(), Plan(srcs, 0)[0], Checkpoint{Offset: 3, Matches: []dedup.Match{{ItemID: "nope"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown item "nope"`) {
		t.Fatalf("bad checkpoint: err = %v", err)
	}
}

func TestBalancedShardBytes(t *testing.T) {
	const mb = 1 << 20
	big := []Source{{URI: "a.txt", Size: 315 * mb}, {URI: "b.txt.gz", Size: 900 * mb, Compression: "gzip"}}
	for _, c := range []struct {
		srcs    []Source
		max     int64
		workers int
		want    int64
		shards  int
	}{
		{big, 256 * mb, 1, 256 * mb, 3},              // one worker: the cap (2 shards of a.txt, 1 of b)
		{big, 256 * mb, 2, 315 * mb / 8, 9},          // four shards per worker of the splittable bytes
		{big[:1], 256 * mb, 16, MinShardBytes, 20},   // never below the floor
		{big[:1], 8 * mb, 2, 8 * mb, 40},             // nor above the cap
		{big[1:], 256 * mb, 4, MinShardBytes, 1},     // compressed files are one shard whatever the size
		{[]Source{{URI: "s", Size: 10}}, 0, 2, 0, 1}, // 0: one shard per file
	} {
		got := BalancedShardBytes(c.srcs, c.max, c.workers)
		if got != c.want || len(Plan(c.srcs, got)) != c.shards {
			t.Errorf("%v max %d workers %d: %d bytes (%d shards), want %d (%d shards)", c.srcs, c.max, c.workers, got, len(Plan(c.srcs, got)), c.want, c.shards)
		}
	}
}
