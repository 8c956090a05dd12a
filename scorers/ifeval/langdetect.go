package ifeval

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file ports python-langdetect 1.0.9 (langdetect.detect), which the
// official IFEval checkers call. The 55 language profiles and the
// normalisation tables are langdetect's own, packed into
// langdetect_data.json.gz by testdata/ifeval/make_langdetect_data.py.
//
// langdetect is randomised: each call samples n-grams with Python's Mersenne
// Twister. The official checkers leave the seed unset, so a borderline text
// can get different answers from run to run. This port fixes the seed at 0
// (DetectorFactory.seed = 0) and reproduces CPython's generator bit for bit,
// so it gives the answer python-langdetect gives with seed 0 and profiles
// loaded in sorted order.

//go:embed langdetect_data.json.gz
var langdetectGz []byte

// ErrNoFeatures is langdetect's "No features in text." error; the IFEval
// checkers count such responses as following the instruction.
var ErrNoFeatures = errors.New("langdetect: no features in text")

type langProb struct {
	lang int
	p    float64
}

type langDetector struct {
	langs          []string
	ngrams         map[string][]langProb // sparse rows of word_lang_prob_map
	latin1Excluded string
	cjk            map[rune]rune
	viFrom, dmark  []rune
	viTo           [5][]rune
}

var loadDetector = sync.OnceValues(func() (*langDetector, error) {
	zr, err := gzip.NewReader(bytes.NewReader(langdetectGz))
	if err != nil {
		return nil, err
	}
	var raw struct {
		Langs    []string `json:"langs"`
		Profiles map[string]struct {
			Freq   map[string]int `json:"freq"`
			NWords []int          `json:"n_words"`
		} `json:"profiles"`
		Messages   map[string]string `json:"messages"`
		CJKClasses []string          `json:"cjk_classes"`
	}
	if err := json.NewDecoder(zr).Decode(&raw); err != nil {
		return nil, fmt.Errorf("langdetect profiles: %w", err)
	}
	d := &langDetector{langs: raw.Langs, ngrams: make(map[string][]langProb, 90000), cjk: map[rune]rune{}}
	for i, lang := range raw.Langs {
		prof := raw.Profiles[lang]
		if len(prof.NWords) != 3 {
			return nil, fmt.Errorf("langdetect profile %s: n_words has %d entries", lang, len(prof.NWords))
		}
		for w, f := range prof.Freq {
			n := utf8.RuneCountInString(w)
			if n < 1 || n > 3 {
				continue
			}
			d.ngrams[w] = append(d.ngrams[w], langProb{i, float64(f) / float64(prof.NWords[n-1])})
		}
	}
	for _, row := range d.ngrams {
		slices.SortFunc(row, func(a, b langProb) int { return a.lang - b.lang })
	}
	m := raw.Messages
	d.latin1Excluded = m["NGram.LATIN1_EXCLUDE"]
	d.viFrom, d.dmark = []rune(m["TO_NORMALIZE_VI_CHARS"]), []rune(m["DMARK_CLASS"])
	for i, k := range []string{"0300", "0301", "0303", "0309", "0323"} {
		d.viTo[i] = []rune(m["NORMALIZED_VI_CHARS_"+k])
	}
	for _, class := range raw.CJKClasses {
		rs := []rune(class)
		for _, r := range rs {
			d.cjk[r] = rs[0]
		}
	}
	return d, nil
})

// DetectLanguage is langdetect.detect(text) with seed 0. It returns
// ErrNoFeatures when the text has no usable n-gram.
func DetectLanguage(text string) (string, error) {
	d, err := loadDetector()
	if err != nil {
		return "", err
	}
	return d.detect(text)
}

const (
	ldAlpha         = 0.5
	ldAlphaWidth    = 0.05
	ldIterLimit     = 1000
	ldProbThreshold = 0.1
	ldConvThreshold = 0.99999
	ldBaseFreq      = 10000
	ldTrials        = 7
	ldMaxText       = 10000
)

func (d *langDetector) detect(text string) (string, error) {
	rs := d.prepare(text)
	ngrams := d.extractNgrams(rs)
	if len(ngrams) == 0 {
		return "", ErrNoFeatures
	}
	nl := len(d.langs)
	langprob := make([]float64, nl)
	prob := make([]float64, nl)
	var rnd pyRandom
	rnd.seed(0)
	for t := 0; t < ldTrials; t++ {
		for i := range prob {
			prob[i] = 1.0 / float64(nl)
		}
		alpha := ldAlpha + rnd.gauss()*ldAlphaWidth
		weight := alpha / ldBaseFreq
		for i := 0; ; i++ {
			row := ngrams[rnd.below(len(ngrams))]
			k := 0
			for j := range prob {
				p := 0.0
				if k < len(row) && row[k].lang == j {
					p = row[k].p
					k++
				}
				prob[j] *= weight + p
			}
			if i%5 == 0 {
				if normalizeProb(prob) > ldConvThreshold || i >= ldIterLimit {
					break
				}
			}
		}
		for j := range langprob {
			langprob[j] += prob[j] / ldTrials
		}
	}
	best, bestP := "unknown", 0.0
	for j, p := range langprob {
		if p > ldProbThreshold && p > bestP {
			best, bestP = d.langs[j], p
		}
	}
	return best, nil
}

func normalizeProb(prob []float64) float64 {
	sum := 0.0
	for _, p := range prob {
		sum += p
	}
	maxp := 0.0
	for i, p := range prob {
		p /= sum
		if maxp < p {
			maxp = p
		}
		prob[i] = p
	}
	return maxp
}

// prepare is Detector.append followed by cleaning_text.
func (d *langDetector) prepare(text string) []rune {
	text = replaceURLs(text)
	text = replaceMails(text)
	in := d.normalizeVI([]rune(text))
	if len(in) > ldMaxText {
		in = in[:ldMaxText]
	}
	out := make([]rune, 0, len(in))
	var pre rune
	for _, ch := range in {
		if ch != ' ' || pre != ' ' {
			out = append(out, ch)
		}
		pre = ch
	}
	latin, nonLatin := 0, 0
	for _, ch := range out {
		if ch >= 'A' && ch <= 'z' {
			latin++
		} else if ch >= 0x300 {
			// langdetect compares unicode_block(ch), an int, with the string
			// 'Latin Extended Additional', so this test always passes.
			nonLatin++
		}
	}
	if latin*2 < nonLatin {
		kept := out[:0]
		for _, ch := range out {
			if ch < 'A' || ch > 'z' {
				kept = append(kept, ch)
			}
		}
		out = kept
	}
	return out
}

func (d *langDetector) normalizeVI(rs []rune) []rune {
	out := rs[:0:0]
	for i := 0; i < len(rs); i++ {
		if i+1 < len(rs) {
			a := slices.Index(d.viFrom, rs[i])
			m := slices.Index(d.dmark, rs[i+1])
			if a >= 0 && m >= 0 {
				out = append(out, d.viTo[m][a])
				i++
				continue
			}
		}
		out = append(out, rs[i])
	}
	return out
}

func isURLChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || strings.IndexByte("-_.?&~;+=/#", c) >= 0
}

// replaceURLs is URL_RE.sub(' ', text), https?://[-_.?&~;+=/#0-9A-Za-z]{1,2076}.
func replaceURLs(s string) string {
	if !strings.Contains(s, "http") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		j := -1
		if strings.HasPrefix(s[i:], "http://") {
			j = i + 7
		} else if strings.HasPrefix(s[i:], "https://") {
			j = i + 8
		}
		if j >= 0 {
			k := j
			for k < len(s) && k-j < 2076 && isURLChar(s[k]) {
				k++
			}
			if k > j {
				b.WriteByte(' ')
				i = k
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func isMailLocal(c byte) bool { return isMailDomain(c) || c == '.' }
func isMailDomain(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '-' || c == '_'
}

// replaceMails is MAIL_RE.sub(' ', text),
// [-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}.
func replaceMails(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	last := 0
	for at := 0; at < len(s); at++ {
		if s[at] != '@' || at < last {
			continue
		}
		start := at
		for start > last && at-start < 64 && isMailLocal(s[start-1]) {
			start--
		}
		if start == at {
			continue
		}
		q := at + 1
		a := 0
		for q+a < len(s) && a < 255 && isMailDomain(s[q+a]) {
			a++
		}
		if a == 0 {
			continue
		}
		c := 0
		for q+a+c < len(s) && c < 255 && isMailLocal(s[q+a+c]) {
			c++
		}
		end := q + a + c
		if c == 0 {
			if a < 2 {
				continue
			}
			c = 0
			for q+a-1+c < len(s) && c < 255 && isMailLocal(s[q+a-1+c]) {
				c++
			}
			end = q + a - 1 + c
		}
		b.WriteString(s[last:start])
		b.WriteByte(' ')
		last = end
		at = end - 1
	}
	b.WriteString(s[last:])
	return b.String()
}

// normalizeChar is NGram.normalize.
func (d *langDetector) normalizeChar(ch rune) rune {
	switch {
	case ch <= 0x7f:
		if ch < 'A' || ch > 'Z' && ch < 'a' || ch > 'z' {
			return ' '
		}
	case ch <= 0xff:
		if strings.ContainsRune(d.latin1Excluded, ch) {
			return ' '
		}
	case ch >= 0x180 && ch <= 0x24f:
		if ch == 0x219 {
			return 0x15f
		}
		if ch == 0x21b {
			return 0x163
		}
	case ch >= 0x2000 && ch <= 0x206f:
		return ' '
	case ch >= 0x600 && ch <= 0x6ff:
		if ch == 0x6cc {
			return 0x64a
		}
	case ch >= 0x1e00 && ch <= 0x1eff:
		if ch >= 0x1ea0 {
			return 0x1ec3
		}
	case ch >= 0x3040 && ch <= 0x309f:
		return 0x3042
	case ch >= 0x30a0 && ch <= 0x30ff:
		return 0x30a2
	case ch >= 0x3100 && ch <= 0x312f, ch >= 0x31a0 && ch <= 0x31bf:
		return 0x3105
	case ch >= 0x4e00 && ch <= 0x9fff:
		if r, ok := d.cjk[ch]; ok {
			return r
		}
	case ch >= 0xac00 && ch <= 0xd7af:
		return 0xac00
	}
	return ch
}

// extractNgrams is Detector._extract_ngrams with NGram.add_char. It returns
// the probability rows of the n-grams found, in text order.
func (d *langDetector) extractNgrams(text []rune) [][]langProb {
	var out [][]langProb
	var key []byte
	grams := []rune{' '}
	capital := false
	for _, ch := range text {
		ch = d.normalizeChar(ch)
		last := grams[len(grams)-1]
		skip := false
		if last == ' ' {
			grams = grams[:0]
			grams = append(grams, ' ')
			capital = false
			if ch == ' ' {
				skip = true
			}
		} else if len(grams) >= 3 {
			grams = append(grams[:0], grams[1:]...)
		}
		if !skip {
			grams = append(grams, ch)
			if pyRuneUpper(ch) {
				if pyRuneUpper(last) {
					capital = true
				}
			} else {
				capital = false
			}
		}
		if capital {
			continue
		}
		for n := 1; n <= 3; n++ {
			if len(grams) < n {
				break
			}
			w := grams[len(grams)-n:]
			if len(w) == 1 && w[0] == ' ' {
				continue
			}
			key = key[:0]
			for _, r := range w {
				key = utf8.AppendRune(key, r)
			}
			if row, ok := d.ngrams[string(key)]; ok {
				out = append(out, row)
			}
		}
	}
	return out
}
