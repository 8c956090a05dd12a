package dedup

import (
	"bytes"
	"math/bits"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/dedup/deduptest"
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

// screen screens documents with one Matcher, as the corpus scanner does a
// shard: each at the offset it has in the documents joined by empty lines.
func screen(idx *Index, docs []string) []Match {
	m := NewMatcher(idx)
	var off int64
	for _, d := range docs {
		m.Doc([]byte(d), off)
		off += int64(len(d)) + 2
	}
	return m.Matches("corpus.txt")
}

func matchKinds(ms []Match) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		out[m.ItemID] = m.Kind
	}
	return out
}

func TestPlantedContamination(t *testing.T) {
	items := deduptest.PlantedItems()
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
	got := matchKinds(screen(idx, deduptest.PlantedDocs()))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("matches %v\nwant    %v", got, want)
	}
	for _, m := range screen(idx, deduptest.PlantedDocs()) {
		if m.Kind == KindJaccard && (m.Jaccard < 0.836 || m.Jaccard > 0.837) {
			t.Errorf("%s: jaccard %v, want 51/61", m.ItemID, m.Jaccard)
		}
	}

	ms := screen(idx, deduptest.PlantedDocs())
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
		items, docs := deduptest.RandomCase(r, 150, 400)
		for _, opt := range []Options{{}, {MinExactLen: 12, ShingleN: 3, Jaccard: 0.6}, {MinExactLen: 1, NoJaccard: true}} {
			idx, err := NewIndex(items, opt)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteForce(items, docs, opt)
			got := map[string]bool{}
			for _, m := range screen(idx, docs) {
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
		m := NewMatcher(idx)
		m.Doc([]byte(doc), 0)
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
		checkWordSteps(t, s)
	})
}

func TestNewIndexErrors(t *testing.T) {
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
	docs := []string{"ข่าววันนี้" + thai + "และอื่นๆ", strings.Replace(khmer, " ", "\n  ", 1)}
	got := matchKinds(screen(idx, docs))
	if want := map[string]string{"th": KindExact, "km": KindExact}; !reflect.DeepEqual(got, want) {
		t.Fatalf("matches %v, want %v", got, want)
	}
}

// A corpus file is named, in result.json's dedup.corpus, by the bytes the
// screen read: an S3 object by the ETag every ranged read required, a local
// file by its SHA-256.
func TestFingerprintNamesTheBytesScreened(t *testing.T) {
	for _, c := range []struct {
		f    Fingerprint
		want string
	}{
		{Fingerprint{URI: "/c/a.txt", Size: 12, SHA256: "ab12"}, "/c/a.txt (12 bytes, sha256 ab12)"},
		{Fingerprint{URI: "s3://b/a.txt", Size: 12, SHA256: "ab12", ETag: `"e1"`}, `s3://b/a.txt (12 bytes, etag "e1")`},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}

// checkWordSteps checks the one-word-at-a-time readers against run: next
// gives run's words; nextKey and keyAt next's keys; after(p) the first
// word starting after p; the word bitmap's kernels agree (checkWordBits);
// and for all-ASCII text the word bitmap gives the same starts, ends and
// keys.
func checkWordSteps(t *testing.T, s string) {
	raw := []byte(s)
	var tok tokenizer
	tok.run(raw, false)
	want := slices.Clone(tok.words)
	var hs, keys []uint64
	var starts, ends []int
	for i := 0; ; {
		h, key, st, e := tok.next(raw, i)
		if st < 0 {
			break
		}
		hs, keys, starts, ends = append(hs, h), append(keys, key), append(starts, st), append(ends, e)
		if k2, s2, e2 := tok.nextKey(raw, i); k2 != key || s2 != st || e2 != e {
			t.Fatalf("%q at %d: nextKey %x %d %d, next %x %d %d", s, i, k2, s2, e2, key, st, e)
		}
		if k2, s2, e2 := tok.keyAt(raw, i); k2 != key || s2 != st || e2 != e {
			t.Fatalf("%q at %d: keyAt %x %d %d, next %x %d %d", s, i, k2, s2, e2, key, st, e)
		}
		i = e
	}
	if !slices.Equal(hs, want) {
		t.Fatalf("%q: next gives %d words, run %d", s, len(hs), len(want))
	}
	for p := range raw {
		j := 0
		for j < len(starts) && starts[j] <= p {
			j++
		}
		key, st, _ := tok.after(raw, p)
		if j == len(starts) {
			if st >= 0 {
				t.Fatalf("%q: after(%d) = word at %d, want none", s, p, st)
			}
		} else if st != starts[j] || key != keys[j] {
			t.Fatalf("%q: after(%d) = word at %d, want %d", s, p, st, starts[j])
		}
	}
	var m Matcher
	checkWordBits(t, &m, raw) // the AVX2 bitmap against the Go one and a byte-wise reading
	if !m.wordBits(raw) {
		return
	}
	if n := m.markStarts(); n != len(starts) {
		t.Fatalf("%q: bitmap counts %d words, tokenizer %d", s, n, len(starts))
	}
	k := 0
	for st := m.nextStart(0); st >= 0; st = m.nextStart(m.wordEnd(st)) {
		if k >= len(starts) || st != starts[k] || m.wordEnd(st) != ends[k] || keyOf(raw, st, m.wordEnd(st)) != keys[k] {
			t.Fatalf("%q: bitmap word %d at %d, tokenizer's at %v", s, k, st, starts)
		}
		k++
	}
	if k != len(starts) {
		t.Fatalf("%q: bitmap %d words, tokenizer %d", s, k, len(starts))
	}
}
