package chrf

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/scorers/chrf/chrftest"
)

const eps = 1e-4 // sacrebleu's test tolerance

// Vectors from sacrebleu test/test_chrf.py (2.x): corpus_chrf(hyps, [refs],
// char_order=6, word_order=0, beta=3, eps_smoothing=True).
var sacrebleuEpsCases = []corpusCase{
	{[]string{"abcdefg"}, []string{"hijklmnop"}, 0.0},
	{[]string{"a"}, []string{"b"}, 0.0},
	{[]string{""}, []string{"b"}, 0.0},
	{[]string{""}, []string{"ref"}, 0.0},
	{[]string{""}, []string{"reference"}, 0.0},
	{[]string{"aa"}, []string{"ab"}, 8.3333},
	{[]string{"a", "b"}, []string{"a", "c"}, 8.3333},
	{[]string{"a"}, []string{"a"}, 16.6667},
	{[]string{"a b c"}, []string{"a b c"}, 50.0},
	{[]string{"a b c"}, []string{"abc"}, 50.0},
	{[]string{" risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."},
		[]string{"risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."}, 63.361730},
	{[]string{" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "},
		[]string{"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."}, 64.1302698},
	{[]string{"Niemand hat die Absicht, eine Mauer zu errichten"}, []string{"Niemand hat die Absicht, eine Mauer zu errichten"}, 100.0},
}

// corpusCase is one sacrebleu vector: hypotheses, their one reference
// each, and the corpus score.
type corpusCase struct {
	hyps, refs []string
	want       float64
}

// checkCorpus requires m's corpus score of every case within eps of sacrebleu's.
func checkCorpus(t *testing.T, m *CHRF, cases []corpusCase) {
	t.Helper()
	for _, tc := range cases {
		got := m.Corpus(tc.hyps, [][]string{tc.refs})
		if got.Err != nil || math.Abs(got.Score-tc.want) >= eps {
			t.Errorf("Corpus(%q, %q) = %v (err %v), want %v", tc.hyps, tc.refs, got.Score, got.Err, tc.want)
		}
	}
}

func TestSacrebleuEpsSmoothing(t *testing.T) {
	checkCorpus(t, New(Options{CharOrder: 6, WordOrder: 0, Beta: 3, EpsSmoothing: true}), sacrebleuEpsCases)
}

// test_chrf.py test_cases_effective_order: eps_smoothing=False (the default).
func TestSacrebleuEffectiveOrder(t *testing.T) {
	checkCorpus(t, New(Options{CharOrder: 6, WordOrder: 0, Beta: 3}), []corpusCase{
		{[]string{"a"}, []string{"a"}, 100.0},
		{[]string{""}, []string{"reference"}, 0.0},
		{[]string{"a b c"}, []string{"a b c"}, 100.0},
		{[]string{"a b c"}, []string{"abc"}, 100.0},
		{[]string{""}, []string{"c"}, 0.0},
		{[]string{"a", "b"}, []string{"a", "c"}, 50.0},
		{[]string{"aa"}, []string{"ab"}, 25.0},
	})
}

// test_chrf.py test_cases_keep_whitespace: remove_whitespace=False.
func TestSacrebleuKeepWhitespace(t *testing.T) {
	m := New(Options{CharOrder: 6, WordOrder: 0, Beta: 3, Whitespace: true})
	for _, tc := range []struct {
		hyp, ref string
		want     float64
	}{
		{"Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich.",
			"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich.", 67.3481606},
		{"risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists .",
			"risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists .", 65.2414427},
	} {
		got := m.Corpus([]string{tc.hyp}, [][]string{{tc.ref}})
		if math.Abs(got.Score-tc.want) >= eps {
			t.Errorf("Corpus(%q) = %v, want %v", tc.hyp, got.Score, tc.want)
		}
	}
}

// test_chrf.py test_chrf_sentence_level: sentence_chrf(hyp, refs, eps_smoothing=True).
func TestSacrebleuSentenceLevel(t *testing.T) {
	m := New(Options{EpsSmoothing: true})
	for _, tc := range []struct {
		hyp  string
		refs []string
		want float64
	}{
		{"Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
			[]string{"Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."}, 39.14078509},
		{"Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
			[]string{"A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."}, 31.22557079},
		{"Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
			[]string{"Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."}, 57.15704367},
	} {
		got := m.Sentence(tc.hyp, tc.refs)
		if math.Abs(got.Score-tc.want) >= eps {
			t.Errorf("Sentence(%q) = %v, want %v", tc.hyp, got.Score, tc.want)
		}
	}
}

// The sacrebleu README: CHRF().corpus_score(sys, refs) with two reference
// streams prints "chrF2 = 59.73"; the signature has nrefs:2.
func TestSacrebleuReadmeMultiRef(t *testing.T) {
	refs := [][]string{
		{"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
		{"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."},
	}
	sys := []string{"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."}
	m := New(Options{})
	got := m.Corpus(sys, refs)
	if s := got.String(); s != "chrF2 = 59.73" {
		t.Errorf("String() = %q, want %q", s, "chrF2 = 59.73")
	}
	if want := "nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:" + SacrebleuVersion; m.Signature() != want || got.Signature != want {
		t.Errorf("Signature() = %q, score signature %q, want %q", m.Signature(), got.Signature, want)
	}
	// The README's variable-reference example: an empty first reference.
	refs[0][0] = ""
	got = m.Corpus(sys, refs)
	if got.NRefs != -1 || !strings.HasPrefix(got.Signature, "nrefs:var|") {
		t.Errorf("variable references: nrefs %d, signature %q; want -1 and nrefs:var", got.NRefs, got.Signature)
	}
}

// Values printed by sacrebleu's CHRF through the Hugging Face "chrf"
// metric (its documented examples and the h2oGPT test suite, which assert
// them exactly): chrF, chrF++, and chrF++ lowercased.
func TestHuggingFaceChrfExamples(t *testing.T) {
	hyps := []string{"The relationship between cats and dogs is not exactly friendly.",
		"a good bookshop is just a genteel black hole that knows how to read."}
	refs := [][]string{{"The relationship between dogs and cats is not exactly friendly.",
		"A good bookshop is just a genteel Black Hole that knows how to read."}}
	for _, tc := range []struct {
		opt  Options
		want float64
	}{
		{Options{}, 84.64214891738334},
		{ChrFPlusPlus, 82.87263732906315},
		{Options{WordOrder: 2, Lowercase: true}, 92.12853119829202},
	} {
		if got := New(tc.opt).Corpus(hyps, refs).Score; math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%+v: %v, want %v", tc.opt, got, tc.want)
		}
	}
}

// Hand computation, chrF++ (nc 6, nw 2, beta 2, effective order) of
// hyp "ab cd" against ref "ab ce":
//
//	chars "abcd" vs "abce":  1-grams 3/4, 2-grams 2/3, 3-grams 1/2, 4-grams 0/1;
//	                         5- and 6-grams: none, so not counted.
//	words [ab cd] vs [ab ce]: 1-grams 1/2, 2-grams 0/1.
//	precision = recall = (3/4 + 2/3 + 1/2 + 0 + 1/2 + 0) / 6 = 29/72,
//	F2 = 5PR/(4P+R) = P, so chrF++ = 100 * 29/72 = 40.2777...
//
// and plain chrF (nc 6, nw 0) of the same pair: (3/4+2/3+1/2+0)/4 = 23/48.
func TestHandComputed(t *testing.T) {
	got := New(ChrFPlusPlus).Sentence("ab cd", []string{"ab ce"})
	if want := 100 * 29.0 / 72; math.Abs(got.Score-want) > 1e-12 {
		t.Errorf("chrF++ = %v, want %v", got.Score, want)
	}
	wantStats := Stats{4, 4, 3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 2, 2, 1, 1, 1, 0}
	if !slices.Equal(got.Stats, wantStats) {
		t.Errorf("stats = %v, want %v", got.Stats, wantStats)
	}
	if got.Name != "chrF2++" {
		t.Errorf("name = %q", got.Name)
	}
	got = New(Options{}).Sentence("ab cd", []string{"ab ce"})
	if want := 100 * 23.0 / 48; math.Abs(got.Score-want) > 1e-12 {
		t.Errorf("chrF = %v, want %v", got.Score, want)
	}
	// A hypothesis n-gram count is reported as 0 when the reference has no
	// n-gram of that order: "abcdef" against "ab" has 2 for 2-grams but 0 for
	// 3..6-grams.
	got = New(Options{}).Sentence("abcdef", []string{"ab"})
	if want := (Stats{6, 2, 2, 5, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}); !slices.Equal(got.Stats, want) {
		t.Errorf("stats = %v, want %v", got.Stats, want)
	}
}

func TestTokens(t *testing.T) {
	m := New(ChrFPlusPlus)
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Hello, world!", []string{"Hello", ",", "world", "!"}},
		{"(hi)", []string{"(hi", ")"}}, // sacrebleu issue #124, kept on purpose
		{"(hi", []string{"(", "hi"}},
		{"... . a", []string{"..", ".", ".", "a"}},
		{"\"Saat ini ada,\" tambahnya.", []string{"\"", "Saat", "ini", "ada,", "\"", "tambahnya", "."}},
		{"a\u00a0b\u3000c\x1cd\u0085e", []string{"a", "b", "c", "d", "e"}}, // Python str.split() whitespace
		{"é.", []string{"é", "."}},
		{"«a»", []string{"«a»"}}, // only ASCII punctuation is split
		{"", nil},
	} {
		if got := m.Tokens(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Expected values are Python 3.11's str.lower() outputs.
func TestPyLower(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ABC Déjà", "abc déjà"},
		{"İstanbul", "i\u0307stanbul"},
		{"ΟΔΟΣ ΟΔΟΣ.", "οδος οδος."}, // final sigma before a space and before punctuation
		{"Σ", "σ"}, // no cased letter before: not final
		{"ΑΣΑ", "ασα"},
		{"ΑΣ'Α", "ασ'α"},         // an apostrophe is case-ignorable: a letter follows
		{"Α\u0301Σ", "α\u0301ς"}, // a combining accent is case-ignorable
	} {
		if got := string(pyLower(nil, []rune(tc.in))); got != tc.want {
			t.Errorf("pyLower(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	m := New(Options{Lowercase: true})
	if got := m.Sentence("HELLO", []string{"hello"}); got.Score != 100 {
		t.Errorf("lowercase chrF = %v, want 100", got.Score)
	}
	if !strings.Contains(m.Signature(), "case:lc") {
		t.Errorf("signature %q lacks case:lc", m.Signature())
	}
}

func TestSignature(t *testing.T) {
	m := New(ChrFPlusPlus)
	want := "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:" + SacrebleuVersion
	if got := m.Signature(); got != want {
		t.Errorf("Signature() = %q, want %q", got, want)
	}
	if got := New(Options{EpsSmoothing: true, Whitespace: true}).Signature(); !strings.Contains(got, "eff:no|nc:6|nw:0|space:yes") {
		t.Errorf("Signature() = %q", got)
	}
	if got := m.Corpus([]string{"a"}, [][]string{{"a"}}).Format(1, m.Signature()); got != "chrF2++|"+want+" = 100.0" {
		t.Errorf("Format = %q", got)
	}
}

func TestBadInput(t *testing.T) {
	m := New(ChrFPlusPlus)
	if got := m.Corpus([]string{"a", "b"}, [][]string{{"a"}}); got.Err == nil || !math.IsNaN(got.Score) {
		t.Errorf("length mismatch: got %v, err %v", got.Score, got.Err)
	}
	if got := m.Corpus(nil, [][]string{{}}); got.Err == nil {
		t.Error("empty corpus: no error")
	}
	if got := m.Corpus([]string{"a"}, nil); got.Err == nil {
		t.Error("no reference stream: no error")
	}
	if got := m.Sentence("a", []string{"", ""}); !errors.Is(got.Err, ErrNoReference) {
		t.Errorf("empty references: err %v", got.Err)
	}
	if err := (Options{WordOrder: -1}).Validate(); err == nil {
		t.Error("negative word order validated")
	}
	// Invalid UTF-8 is scored, not rejected: each bad byte is one U+FFFD.
	if got := m.Sentence("\xff\xfe", []string{"\xff\xfe"}); got.Score != 100 {
		t.Errorf("invalid UTF-8: %v", got.Score)
	}
}

// TestGolden compares with testdata/chrf/golden.jsonl, written by
// testdata/chrf/make_golden.py (a Counter-based restatement of sacrebleu's
// chrF that first checks itself against sacrebleu's published vectors), on
// 40 FLORES-200 Indonesian sentences with perturbed hypotheses and a second,
// sometimes empty, reference stream.
func TestGolden(t *testing.T) {
	hyps := chrftest.Lines(t, "hyps.txt")
	refs := chrftest.Lines(t, "refs.txt")
	refs2 := chrftest.Lines(t, "refs2.txt")
	n := 0
	for _, g := range chrftest.Golden(t) {
		n++
		m := New(Options{CharOrder: g.Config.NC, WordOrder: g.Config.NW, Beta: g.Config.Beta,
			Lowercase: g.Config.LC, Whitespace: g.Config.KeepSpace, EpsSmoothing: g.Config.EpsSmoothing})
		streams := [][]string{refs}
		if g.Refs == "2ref" {
			streams = append(streams, refs2)
		}
		got := m.Corpus(hyps, streams)
		if got.Err != nil || math.Abs(got.Score-g.Corpus) > 1e-9 || !slices.Equal(got.Stats, g.Stats) {
			t.Errorf("%s/%s corpus = %v %v (err %v), want %v %v", g.Config.Name, g.Refs, got.Score, got.Stats, got.Err, g.Corpus, g.Stats)
		}
		for i, h := range hyps {
			segRefs := []string{refs[i]}
			if g.Refs == "2ref" {
				segRefs = append(segRefs, refs2[i])
			}
			if s := m.Sentence(h, segRefs); math.Abs(s.Score-g.Sentence[i]) > 1e-9 {
				t.Errorf("%s/%s sentence %d = %v, want %v", g.Config.Name, g.Refs, i+1, s.Score, g.Sentence[i])
			}
		}
	}
	if n != 12 {
		t.Errorf("read %d golden records, want 12", n)
	}
}

// TestGoldenRandom compares per-sentence statistics and scores with the
// Python reference on 200 generated pairs built from edge-case characters:
// Python-only whitespace, Unicode spaces, punctuation at word edges, Σ and İ
// under lowercasing, combining accents, astral characters, 1–3 references.
func TestGoldenRandom(t *testing.T) {
	f, err := os.Open("../../testdata/chrf/golden_random.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	metrics := map[string]*CHRF{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var rec struct {
			Hyp    string   `json:"hyp"`
			Refs   []string `json:"refs"`
			Scores map[string]struct {
				Config chrftest.Config `json:"config"`
				Score  float64         `json:"score"`
				Stats  []int           `json:"stats"`
			} `json:"scores"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		n++
		for name, want := range rec.Scores {
			m := metrics[name]
			if m == nil {
				c := want.Config
				m = New(Options{CharOrder: c.NC, WordOrder: c.NW, Beta: c.Beta, Lowercase: c.LC, Whitespace: c.KeepSpace, EpsSmoothing: c.EpsSmoothing})
				metrics[name] = m
			}
			got := m.Sentence(rec.Hyp, rec.Refs)
			if got.Err != nil || math.Abs(got.Score-want.Score) > 1e-9 || !slices.Equal(got.Stats, want.Stats) {
				t.Errorf("%s: Sentence(%q, %q) = %v %v, want %v %v", name, rec.Hyp, rec.Refs, got.Score, got.Stats, want.Score, want.Stats)
			}
		}
	}
	if n != 200 {
		t.Errorf("read %d records, want 200", n)
	}
}

// TestSegmentStatsSum checks that the corpus score is the F-score of the
// summed segment statistics, which the NLG bootstrap relies on.
func TestSegmentStatsSum(t *testing.T) {
	hyps := chrftest.Lines(t, "hyps.txt")
	refs := chrftest.Lines(t, "refs.txt")
	m := New(ChrFPlusPlus)
	segs, err := m.SegmentStats(hyps, [][]string{refs})
	if err != nil {
		t.Fatal(err)
	}
	total := make(Stats, len(segs[0]))
	for _, s := range segs {
		total.Add(s)
	}
	if got, want := m.FScore(total), m.Corpus(hyps, [][]string{refs}).Score; got != want {
		t.Errorf("FScore(sum) = %v, Corpus = %v", got, want)
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "a", "(hi)", "Hello, world!", "ΟΔΟΣ İ", "\xff\xfe", "a\u00a0b\x1c c", "  .  "} {
		f.Add(s, "ab cd")
	}
	m := New(ChrFPlusPlus)
	lc := New(Options{WordOrder: 3, Lowercase: true, Whitespace: true})
	f.Fuzz(func(t *testing.T, hyp, ref string) {
		for _, tok := range m.Tokens(hyp) {
			if tok == "" || strings.ContainsFunc(tok, isSpace) {
				t.Fatalf("Tokens(%q) has token %q", hyp, tok)
			}
		}
		for _, c := range []*CHRF{m, lc} {
			s := c.Sentence(hyp, []string{ref + "x"})
			if s.Err != nil || s.Score < 0 || s.Score > 100+1e-9 || math.IsNaN(s.Score) {
				t.Fatalf("Sentence(%q, %q) = %v, %v", hyp, ref, s.Score, s.Err)
			}
			if self := c.Sentence(ref+"x", []string{ref + "x"}); math.Abs(self.Score-100) > 1e-9 {
				t.Fatalf("self-score of %q = %v", ref+"x", self.Score)
			}
		}
	})
}

// BenchmarkSentencePair scores FLORES-length (one devtest sentence, ~130
// characters) hypothesis/reference pairs one at a time; pairs/s is the
// figure the issue asks for (≥ 20,000 on one core).
func BenchmarkSentencePair(b *testing.B) {
	hyps := chrftest.Lines(b, "hyps.txt")
	refs := chrftest.Lines(b, "refs.txt")
	m := New(ChrFPlusPlus)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range b.N {
		k := i % len(hyps)
		m.Sentence(hyps[k], refs[k:k+1])
	}
	reportPairs(b, b.N, cpu0)
}

// reportPairs reports pairs per wall-clock second and, where the OS tells
// CPU time, pairs per CPU-second (the one-core figure on a busy machine).
func reportPairs(b *testing.B, pairs int, cpu0 time.Duration) {
	b.ReportMetric(float64(pairs)/b.Elapsed().Seconds(), "pairs/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(pairs)/cpu.Seconds(), "pairs/cpu-s")
	}
}

// BenchmarkCorpus scores the 40-segment corpus at once.
func BenchmarkCorpus(b *testing.B) {
	hyps := chrftest.Lines(b, "hyps.txt")
	refs := chrftest.Lines(b, "refs.txt")
	m := New(ChrFPlusPlus)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		m.Corpus(hyps, [][]string{refs})
	}
	reportPairs(b, b.N*len(hyps), cpu0)
}
