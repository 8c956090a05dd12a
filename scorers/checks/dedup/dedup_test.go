package dedup

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/glossobench/glossobench/scorers"
)

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"  Hello\t\tWORLD \n", "hello world"},
		{"Ibu  Negara\r\nMalaysia", "ibu negara malaysia"},
		{"ÀBÇ\u00a0DÉ\u2003f", "àbç dé f"}, // NBSP and EM SPACE are whitespace
		{"İSTANBUL", "istanbul"},
		{"a\xffB", "a\xffb"}, // invalid UTF-8 kept
		{"\n\n\n", ""},
	} {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNormalizeLines(t *testing.T) {
	var lines []int32
	out := appendNorm(nil, []byte("  One \n\nTwo  three\n four"), &lines)
	if string(out) != "one two three four" {
		t.Fatalf("got %q", out)
	}
	var got []string
	prev := int32(0)
	for _, e := range append(lines, int32(len(out))) {
		got = append(got, string(bytes.TrimSpace(out[prev:e])))
		prev = e
	}
	want := []string{"one", "", "two three", "four"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
}

func words(s string) []uint64 {
	var tok tokenizer
	tok.run([]byte(s), false)
	return slices.Clone(tok.words)
}

func TestWords(t *testing.T) {
	a := words("Kucing, itu (COMEL)! 3.5")
	b := words("kucing itu comel 3 5")
	if len(a) != 5 || !slices.Equal(a, b) {
		t.Fatalf("punctuation or case changed words: %v vs %v", a, b)
	}
	// Tokenizing the raw text and its normalised form agree, ASCII or not.
	for _, s := range []string{"Über  Straße—ÇA\u00a0va? naïve café", "A\u0301B x\xffy İzmir", "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789é"} {
		if !slices.Equal(words(s), words(Normalize(s))) {
			t.Errorf("%q: words differ from its normalised form", s)
		}
	}
	// The one-load fast path (word of <= 8 bytes with 8 bytes readable),
	// the end-of-buffer path and hashWord agree.
	for _, w := range []string{"a", "Ab", "dan", "KUCING", "sembilan", "Sembilanbelas", "0123456789abcdefgh"} {
		want := hashWord([]byte(strings.ToLower(w)), 0)
		if a, b := words(w)[0], words(w + " and some more")[0]; a != want || b != want {
			t.Errorf("%q: hashes %x %x, want %x", w, a, b, want)
		}
	}
	if w := words("pertanggungjawabannya pertanggungjawabanny"); w[0] == w[1] {
		t.Fatal("long words of different lengths collide")
	}
	if w := words("café CAFÉ cafe"); w[0] != w[1] || w[0] == w[2] {
		t.Fatal("non-ASCII case folding")
	}
}

func TestShingleRolling(t *testing.T) {
	w := words("a b c d e f g h i j k l")
	for _, n := range []int{1, 2, 5, 9, 12} {
		got := appendShingles(nil, w, n)
		for j := range got {
			var want uint64
			for _, x := range w[j : j+n] {
				want = bits.RotateLeft64(want, shingleRot) ^ x
			}
			if got[j] != shingleKey(want, n) {
				t.Fatalf("n=%d shingle %d: rolling hash differs from direct", n, j)
			}
		}
		if len(got) != len(w)-n+1 {
			t.Fatalf("n=%d: %d shingles", n, len(got))
		}
	}
}

// The prompts used by the planted-contamination test. Each long one has 60
// words, so with n = 5 it has 56 shingles: one substituted word leaves 51
// shared of 61 (J = 0.836, found), two leave 46 of 66 (J = 0.697, not found).
var (
	longA = sixtyWords("alpha")
	longB = sixtyWords("beta")
	longC = sixtyWords("gamma")
	longD = sixtyWords("delta")
	longE = sixtyWords("epsilon")
)

func sixtyWords(tag string) string {
	var w []string
	for i := 0; i < 60; i++ {
		w = append(w, fmt.Sprintf("%s%d", tag, i))
	}
	return strings.Join(w, " ")
}

func replaceWord(s string, pos int, with string) string {
	w := strings.Fields(s)
	w[pos] = with
	return strings.Join(w, " ")
}

func plantedItems() []scorers.Item {
	return []scorers.Item{
		{ID: "exact", Axis: "knowledge", Prompt: longA},
		{ID: "spacing", Axis: "knowledge", Prompt: longB},
		{ID: "para_above", Axis: "nlu", Prompt: longC},
		{ID: "para_below", Axis: "nlu", Prompt: longD},
		{ID: "clean", Axis: "nlu", Prompt: longE},
		{ID: "short_line", Axis: "mt", Prompt: "Apakah ibu negara Malaysia?"},
		{ID: "short_inside", Axis: "mt", Prompt: "Siapakah Perdana Menteri?"},
		{ID: "short_doc", Axis: "mt", Prompt: "Terjemahkan: selamat pagi"},
		{ID: "near_miss", Axis: "if", Prompt: "Tulis sebuah karangan pendek tentang hari raya di kampung halaman anda."},
		{ID: "task1a", Axis: "if", TaskID: "t1", Prompt: "Senaraikan tiga buah negeri di pantai timur Semenanjung Malaysia dengan ringkas."},
		{ID: "task1b", Axis: "if", TaskID: "t1", Prompt: "Sebutkan nama sungai yang paling panjang di Semenanjung Malaysia dan huraikan."},
	}
}

func plantedCorpus() string {
	paraAbove := replaceWord(longC, 30, "zzz")
	paraBelow := replaceWord(replaceWord(longD, 10, "yyy"), 45, "xxx")
	spaced := strings.ToUpper(strings.ReplaceAll(longB, " ", " \t\n  "))
	return strings.Join([]string{
		"Ini dokumen biasa tanpa apa-apa.\nBaris kedua.",
		"Mukadimah panjang. " + longA + " Penutup.", // exact copy inside a document
		"Baris satu\r\n" + spaced,                   // case + whitespace changes
		paraAbove,
		paraBelow,
		"Soalan:\n  APAKAH ibu negara   malaysia?  \nJawapan: Kuala Lumpur",
		"Teks ini bertanya Siapakah Perdana Menteri? di tengah ayat.",
		"terjemahkan:    SELAMAT PAGI",
		"Tulis sebuah karangan pendek tentang hari raya di kampung halaman and", // "anda." cut to "and": J = 7/9
		"Sebutkan nama sungai yang paling panjang di semenanjung malaysia dan huraikan.",
		longE[:len(longE)/2], // half an item: neither exact nor Jaccard
	}, "\n\n") + "\n"
}

func scanString(t *testing.T, idx *Index, name, data string, shardBytes int64) []Match {
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

func matchKinds(ms []Match) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		out[m.ItemID] = m.Kind
	}
	return out
}

func TestPlantedContamination(t *testing.T) {
	items := plantedItems()
	idx, err := NewIndex(items, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"exact":      KindExact,
		"spacing":    KindExact,
		"para_above": KindJaccard,
		"short_line": KindWhole,
		"short_doc":  KindWhole,
		"task1b":     KindExact,
	}
	// not found: para_below (J = 0.70), clean (half copy), short_inside
	// (short prompts match only whole lines), near_miss (one character
	// missing), task1a (its task is contaminated, but it did not match).
	got := matchKinds(scanString(t, idx, "corpus.txt", plantedCorpus(), 0))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("matches %v\nwant    %v", got, want)
	}
	for _, m := range scanString(t, idx, "corpus.txt", plantedCorpus(), 0) {
		if m.Kind == KindJaccard && (m.Jaccard < 0.836 || m.Jaccard > 0.837) {
			t.Errorf("%s: jaccard %v, want 51/61", m.ItemID, m.Jaccard)
		}
	}

	ms := scanString(t, idx, "corpus.txt", plantedCorpus(), 0)
	rep := Summarize(items, ms, []Fingerprint{{URI: "corpus.txt"}}, Options{})
	var dropped []string
	for _, d := range rep.Drops {
		dropped = append(dropped, d.ItemID+":"+d.Kind)
	}
	wantDropped := []string{"exact:exact", "spacing:exact", "para_above:jaccard", "short_line:whole", "short_doc:whole", "task1a:task", "task1b:exact"}
	if !reflect.DeepEqual(dropped, wantDropped) {
		t.Fatalf("drops %v\nwant  %v", dropped, wantDropped)
	}
	if want := []string{"para_below", "clean", "short_inside", "near_miss"}; !reflect.DeepEqual(rep.KeptIDs, want) {
		t.Fatalf("kept %v, want %v", rep.KeptIDs, want)
	}
	byAxis := map[string]AxisReport{}
	for _, a := range rep.Axes {
		byAxis[a.Axis] = a
	}
	// if: tasks near_miss and t1; t1 contaminated.
	if a := byAxis["if"]; a.Tasks != 2 || a.ContaminatedTasks != 1 || *a.ContaminationRate != 0.5 || a.Dropped != 2 {
		t.Errorf("axis if: %+v", a)
	}
	if a := byAxis["nlu"]; a.Tasks != 3 || a.ContaminatedTasks != 1 {
		t.Errorf("axis nlu: %+v", a)
	}

	none := Summarize(items, nil, nil, Options{})
	if !none.NoCorpus || none.Axes[0].ContaminationRate != nil || none.Kept != len(items) {
		t.Errorf("no corpus: %+v", none)
	}
}

func TestJSONLAndCompression(t *testing.T) {
	items := plantedItems()
	idx, err := NewIndex(items, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := matchKinds(scanString(t, idx, "corpus.txt", plantedCorpus(), 0))

	var jl bytes.Buffer
	for i, doc := range strings.Split(strings.TrimSpace(plantedCorpus()), "\n\n") {
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
	zst := enc.EncodeAll([]byte(plantedCorpus()), nil)
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

// randomCase builds a random item set and a corpus with planted copies,
// near copies and noise.
func randomCase(r *rand.Rand, nItems, nDocs int) ([]scorers.Item, []string) {
	vocab := make([]string, 120)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%c%d", 'a'+rune(i%26), i)
	}
	words := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return w
	}
	var items []scorers.Item
	for i := 0; i < nItems; i++ {
		n := 1 + r.IntN(40)
		if r.IntN(4) == 0 {
			n = 1 + r.IntN(4) // short prompts
		}
		items = append(items, scorers.Item{ID: fmt.Sprintf("i%03d", i), TaskID: fmt.Sprintf("t%d", i/3), Prompt: strings.Join(words(n), " ")})
	}
	var docs []string
	for d := 0; d < nDocs; d++ {
		var w []string
		switch r.IntN(4) {
		case 0: // noise
			w = words(1 + r.IntN(60))
		default: // a (mutated) item, maybe inside other text
			w = strings.Fields(items[r.IntN(len(items))].Prompt)
			for k := r.IntN(3); k > 0; k-- {
				w[r.IntN(len(w))] = vocab[r.IntN(len(vocab))]
			}
			if r.IntN(2) == 0 {
				w = append(append(words(r.IntN(5)), w...), words(r.IntN(5))...)
			}
		}
		s := strings.Join(w, " ")
		if r.IntN(3) == 0 {
			s = strings.ToUpper(s)
		}
		if r.IntN(3) == 0 {
			s = strings.ReplaceAll(s, " ", "\n ")
		}
		docs = append(docs, s)
	}
	return items, docs
}

// bruteForce is the definition, written the slow and obvious way.
func bruteForce(items []scorers.Item, docs []string, opt Options) map[string]bool {
	opt, _ = opt.withDefaults()
	shingles := func(s string) map[string]bool {
		w := strings.FieldsFunc(s, func(r rune) bool { return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) })
		set := map[string]bool{}
		for i := 0; i+opt.ShingleN <= len(w); i++ {
			set[strings.Join(w[i:i+opt.ShingleN], "\x00")] = true
		}
		return set
	}
	hit := map[string]bool{}
	norms := make([]string, len(docs))
	docSh := make([]map[string]bool, len(docs))
	for i, d := range docs {
		norms[i] = Normalize(d)
		docSh[i] = shingles(norms[i])
	}
	for _, it := range items {
		p := Normalize(it.Prompt)
		ps := shingles(p)
		for di, d := range docs {
			nd := norms[di]
			if len([]rune(p)) >= opt.MinExactLen {
				if strings.Contains(nd, p) {
					hit[it.ID] = true
				}
			} else {
				if nd == p {
					hit[it.ID] = true
				}
				for _, line := range strings.Split(d, "\n") {
					if Normalize(line) == p {
						hit[it.ID] = true
					}
				}
			}
			if !opt.NoJaccard && len(ps) > 0 {
				ds := docSh[di]
				inter := 0
				for s := range ps {
					if ds[s] {
						inter++
					}
				}
				if float64(inter)/float64(len(ps)+len(ds)-inter) >= opt.Jaccard-1e-12 {
					hit[it.ID] = true
				}
			}
		}
	}
	return hit
}

func TestAgainstBruteForce(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		items, docs := randomCase(r, 150, 400)
		for _, opt := range []Options{{}, {MinExactLen: 12, ShingleN: 3, Jaccard: 0.6}, {MinExactLen: 1, NoJaccard: true}} {
			idx, err := NewIndex(items, opt)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteForce(items, docs, opt)
			got := map[string]bool{}
			for _, m := range scanString(t, idx, "c.txt", strings.Join(docs, "\n\n"), 997) {
				got[m.ItemID] = true
			}
			if !reflect.DeepEqual(got, want) {
				for id := range want {
					if !got[id] {
						t.Errorf("seed %d opt %+v: missed %s", seed, opt, id)
					}
				}
				for id := range got {
					if !want[id] {
						t.Errorf("seed %d opt %+v: false match %s", seed, opt, id)
					}
				}
			}
			if len(want) == 0 || len(want) == len(items) {
				t.Errorf("seed %d: degenerate case, %d of %d hit", seed, len(want), len(items))
			}
		}
	}
}

func TestShardCountInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	items, docs := randomCase(r, 200, 600)
	idx, err := NewIndex(items, Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(docs, "\n\n\r\n") + "\n"
	var lines bytes.Buffer
	for _, d := range docs {
		lines.WriteString(strings.ReplaceAll(d, "\n", " ") + "\n")
	}
	for _, c := range []struct{ name, data string }{{"c.txt", text}, {"c.lines", lines.String()}} {
		var ref []Match
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
			sha := Summarize(items, ms, []Fingerprint{{URI: "x"}}, Options{}).KeptSHA256
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
	items, docs := randomCase(r, 200, 2000)
	idx, _ := NewIndex(items, Options{})
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

func FuzzLoadItems(f *testing.F) {
	f.Add([]byte("{\"id\":\"a\",\"prompt\":\"p\"}\n\n{\"id\":\"b\",\"prompt\":\"q\",\"task_id\":\"t\"}\n"))
	f.Add([]byte("{\"id\":\"a\"}\n"))
	f.Add([]byte("{\"id\":\"a\",\"prompt\":\"p\"}\n{\"id\":\"a\",\"prompt\":\"p\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := readItems("f.jsonl", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if _, err := NewIndex(items, Options{}); err != nil && !strings.Contains(err.Error(), "empty prompt") {
			t.Fatalf("loaded items do not index: %v", err)
		}
	})
}

func TestLoadItemsErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"{\"id\":\"a\",\"prompt\":\"p\"}\n{\"prompt\":\"q\"}\n", "f.jsonl:2: field id"},
		{"{\"id\":\"a\"}\n", "f.jsonl:1: field prompt"},
		{"\n{\"id\":\"a\",\"prompt\":\"p\"}\n{\"id\":\"a\",\"prompt\":\"p\"}\n", `f.jsonl:3: field id: "a" already used on line 2`},
		{"{\"id\":\"a\",\"prompt\":\"p\"\n", "f.jsonl:1: "},
		{"", "f.jsonl: no items"},
	} {
		_, err := readItems("f.jsonl", strings.NewReader(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.data, err, c.want)
		}
	}
}

// TestKeptSHA256Golden compares with sort -u | sha256sum and Python's
// hashlib (testdata/dedup/kept_sha256_reference.sh).
func TestKeptSHA256Golden(t *testing.T) {
	ids, err := os.ReadFile("../../../testdata/dedup/kept_ids.txt")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("../../../testdata/dedup/kept_sha256_golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(golden)), "\n") {
		f := strings.Fields(l)
		want[f[0]] = f[1]
	}
	list := strings.Split(strings.TrimSpace(string(ids)), "\n")
	for name, in := range map[string][]string{"ids": list, "empty": nil, "one": {"synth/2"}} {
		if got := KeptSHA256(in); got != want[name] {
			t.Errorf("%s: KeptSHA256 = %s, want %s", name, got, want[name])
		}
	}
	// Order and repeats do not matter.
	rev := slices.Clone(list)
	slices.Reverse(rev)
	if KeptSHA256(append(rev, list...)) != want["ids"] {
		t.Error("order or duplicates changed the hash")
	}
}

// FuzzMatch compares the indexed screen of one document with the brute
// force definition, on arbitrary (including invalid UTF-8) text.
func FuzzMatch(f *testing.F) {
	f.Add("Ibu negara Malaysia ialah Kuala Lumpur", "Soalan: IBU NEGARA malaysia ialah kuala   lumpur!", uint8(10))
	f.Add("a b c d", "x a b c d y\na b c d", uint8(3))
	f.Add("Straße İzmir café", "STRASSE izmir CAFÉ", uint8(1))
	f.Add("\x81abc def ghi jkl", "\xc3\x81abc def ghi jkl", uint8(4))
	f.Fuzz(func(t *testing.T, prompt, doc string, minLen uint8) {
		items := []scorers.Item{{ID: "p", Prompt: prompt}}
		opt := Options{MinExactLen: 1 + int(minLen%40), ShingleN: 2, Jaccard: 0.5}
		idx, err := NewIndex(items, opt)
		if err != nil {
			return // empty prompt
		}
		m := newMatcher(idx)
		m.doc([]byte(doc), 0)
		_, got := m.found[0]
		want := bruteForce(items, []string{doc}, opt)["p"]
		if got != want {
			t.Fatalf("prompt %q doc %q minLen %d: matched %v, brute force %v", prompt, doc, opt.MinExactLen, got, want)
		}
	})
}

// refWords is the tokenizer's definition, the slow way.
func refWords(s string) []uint64 {
	var out []uint64
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) || r == utf8.RuneError
	}) {
		var low []byte
		for _, r := range w {
			low = utf8.AppendRune(low, unicode.ToLower(r))
		}
		out = append(out, hashWord(low, 0))
	}
	return out
}

func TestNonWordBytes(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			v := uint64(0x6161616161616161) // "aaaaaaaa"
			v = v&^(0xff<<(8*pos)) | uint64(c)<<(8*pos)
			got := nonWordBytes(v)>>(8*pos+7)&1 == 1
			want := !(c < 128 && asciiClass[c] == clsWord)
			if got != want {
				t.Fatalf("byte %#x at %d: non-word %v, want %v", c, pos, got, want)
			}
			if others := nonWordBytes(v) &^ (0x80 << (8 * pos)); others != 0 {
				t.Fatalf("byte %#x at %d disturbs its neighbours: %#x", c, pos, others)
			}
		}
	}
}

func FuzzTokenize(f *testing.F) {
	f.Add("Kucing, itu (COMEL)! 3.5 abcdefghijklmnop")
	f.Add("Über\u00a0straße—ÇA x\xffy İzmir \u0301a")
	f.Add("a\nb\r\n\nc")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := words(s), refWords(s); !slices.Equal(got, want) {
			t.Fatalf("%q: %d words, reference %d", s, len(got), len(want))
		}
		var tok tokenizer
		tok.run([]byte(s), true)
		if len(tok.lines) != strings.Count(s, "\n") {
			t.Fatalf("%q: %d line ends", s, len(tok.lines))
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
	idx, _ := NewIndex(plantedItems(), Options{})
	dir := t.TempDir()
	good := filepath.Join(dir, "a.txt")
	os.WriteFile(good, []byte(plantedCorpus()), 0o644)
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
	_, err = Scanner{Index: idx}.ScanShard(context.Background(), Plan(srcs, 0)[0], Checkpoint{Offset: 3, Matches: []Match{{ItemID: "nope"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown item "nope"`) {
		t.Fatalf("bad checkpoint: err = %v", err)
	}
	if _, err := NewIndex([]scorers.Item{{ID: "a", Prompt: "x"}, {ID: "a", Prompt: "y"}}, Options{}); err == nil {
		t.Fatal("duplicate id accepted")
	}
	if _, err := NewIndex([]scorers.Item{{ID: "a", Prompt: " \u00a0 "}}, Options{}); err == nil {
		t.Fatal("blank prompt accepted")
	}
	if _, err := NewIndex(nil, Options{Jaccard: 1.5}); err == nil {
		t.Fatal("jaccard 1.5 accepted")
	}
}

// Scripts written without spaces make one "word" of a whole sentence; such
// prompts are found by byte anchors.
func TestUnsegmentedScript(t *testing.T) {
	thai := "ภาษาไทยเป็นภาษาที่ไม่มีการเว้นวรรคระหว่างคำในประโยค"
	khmer := "ភាសាខ្មែរមិនដកឃ្លារវាងពាក្យនីមួយៗនៅក្នុងប្រយោគទេ ឧទាហរណ៍"
	items := []scorers.Item{{ID: "th", Prompt: thai}, {ID: "km", Prompt: khmer}, {ID: "th2", Prompt: thai + "ครับ"}}
	idx, err := NewIndex(items, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if idx.anchors == nil {
		t.Fatal("no anchors for unsegmented prompts")
	}
	doc := "ข่าววันนี้" + thai + "และอื่นๆ\n\n" + strings.Replace(khmer, " ", "\n  ", 1)
	got := matchKinds(scanString(t, idx, "c.txt", doc, 0))
	if want := map[string]string{"th": KindExact, "km": KindExact}; !reflect.DeepEqual(got, want) {
		t.Fatalf("matches %v, want %v", got, want)
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
