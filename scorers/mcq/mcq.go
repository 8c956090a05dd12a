// Package mcq is the multiple-choice axis plugin behind Knowledge, NLU and
// Cultural (spec §1): exact match scored by cloze log-likelihood (the letter
// after the answer cue, or the full choice text with acc and acc_norm), by
// generation (the model writes a letter, parsed), or both.
package mcq

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
)

// Version changes whenever a change can move a number.
const Version = "mcq-1.0"

// Axis is one MCQ axis (knowledge, nlu or cultural).
type Axis struct{ name string }

// NewAxis returns the MCQ plugin under the given axis name.
func NewAxis(name string) *Axis { return &Axis{name: name} }

func init() {
	// The three multiple-choice axes: knowledge and nlu score first, cultural last.
	for _, a := range []struct {
		name  string
		order int
	}{{"knowledge", 1}, {"nlu", 2}, {"cultural", 7}} {
		scorers.RegisterAxis(scorers.AxisPlugin{Name: a.name, Kind: "mcq", Order: a.order, New: func() scorers.Axis { return NewAxis(a.name) }})
	}
}

func (a *Axis) Name() string       { return a.name }
func (a *Axis) Version() string    { return Version }
func (a *Axis) ScorerType() string { return scorers.ScorerRule }

// ModelUse: cloze scoring reads log-likelihoods, generate scoring (alone or
// in both) generations.
func (a *Axis) ModelUse(cfg scorers.AxisConfig) scorers.ModelUse {
	return scorers.ModelUse{LogLik: cfg.ScoringMode != "generate", Generate: cfg.ScoringMode == "generate" || cfg.ScoringMode == "both"}
}

// Options the MCQ axes accept under axes.<name>.options.
const (
	optClozeTarget = "cloze_target" // letter (default) | text
	optGenTokens   = "generate_max_tokens"
)

// clozeTarget returns the configured cloze target after validating the option keys.
func clozeTarget(opts map[string]any) (string, error) {
	for k := range opts {
		if k != optClozeTarget && k != optGenTokens {
			return "", fmt.Errorf("options.%s: unknown option (known: %s, %s)", k, optClozeTarget, optGenTokens)
		}
	}
	switch v := opts[optClozeTarget]; v {
	case nil, "letter":
		return "letter", nil
	case "text":
		return "text", nil
	default:
		return "", fmt.Errorf("options.%s: must be letter or text, got %v", optClozeTarget, v)
	}
}

// Load reads every configured dataset; items keep their dataset as the pooling source
// unless the dataset names a finer one (Global-MMLU's subject).
func (a *Axis) Load(cfg scorers.AxisConfig) ([]scorers.Item, error) {
	var all []scorers.Item
	err := a.Each(cfg, func(it scorers.Item) error {
		all = append(all, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

// Each implements scorers.Streamer: the datasets are read a row at a time,
// and of the items only their ids are kept (to refuse a duplicate).
func (a *Axis) Each(cfg scorers.AxisConfig, fn func(scorers.Item) error) error {
	if _, err := clozeTarget(cfg.Options); err != nil {
		return fmt.Errorf("axes.%s.%w", a.name, err)
	}
	if len(cfg.Datasets) == 0 {
		return fmt.Errorf("axes.%s.datasets: none configured", a.name)
	}
	seen := map[string]string{}
	for _, d := range cfg.Datasets {
		err := EachInDataset(a.name, d, cfg.BaseDir, func(it scorers.Item) error {
			if prev, dup := seen[it.ID]; dup {
				return fmt.Errorf("%s:%d: duplicate item id %q (also in %s)", d.Path, it.Line, it.ID, prev)
			}
			seen[it.ID] = d.Path
			return fn(it)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// cues are the per-language words of the prompt; the cloze continuation is the
// letter after the answer cue.
type cues struct{ passage, question, answer, instruct string }

var langCues = map[string]cues{
	"ms": {"Perenggan", "Soalan", "Jawapan", "Jawab dengan satu huruf pilihan sahaja."},
	"id": {"Paragraf", "Pertanyaan", "Jawaban", "Jawablah hanya dengan satu huruf pilihan."},
	"tl": {"Talata", "Tanong", "Sagot", "Sumagot lamang ng isang titik ng pagpipilian."},
	"en": {"Passage", "Question", "Answer", "Answer with the letter of one option only."},
}

func cuesFor(lang string) cues {
	if c, ok := langCues[lang]; ok {
		return c
	}
	return langCues["en"]
}

// Render builds the raw prompt of an item, ending with the answer cue.
func Render(it scorers.Item) string {
	var extra map[string]string
	_ = json.Unmarshal(it.Extra, &extra)
	return render(it, extra)
}

// render is Render with the item's texts already decoded. It writes each
// text once into a buffer sized for all of them (fmt would copy a long
// passage twice more).
func render(it scorers.Item, extra map[string]string) string {
	c := cuesFor(it.Lang)
	var b strings.Builder
	n := 64
	for _, v := range extra {
		n += len(v)
	}
	for _, ch := range it.Choices {
		n += len(ch) + 4
	}
	b.Grow(n)
	if p := extra["passage"]; p != "" {
		b.WriteString(c.passage + ":\n")
		b.WriteString(p)
		b.WriteString("\n\n")
	}
	if s1 := extra["sentence1"]; s1 != "" {
		b.WriteString("1: ")
		b.WriteString(s1)
		b.WriteString("\n2: ")
		b.WriteString(extra["sentence2"])
		b.WriteString("\n")
	}
	q := extra["question"]
	if q == "" && extra["sentence1"] != "" {
		q = map[string]string{"ms": "Pernyataan manakah yang paling sesuai untuk ayat 1 dan ayat 2?", "id": "Pernyataan mana yang paling sesuai untuk kalimat 1 dan kalimat 2?"}[it.Lang]
		q = cmp.Or(q, "Which statement fits sentence 1 and sentence 2 best?")
	}
	b.WriteString(c.question + ": ")
	b.WriteString(q)
	b.WriteString("\n")
	for i, ch := range it.Choices {
		b.WriteString(string(rune('A'+i)) + ". ")
		b.WriteString(ch)
		b.WriteString("\n")
	}
	b.WriteString(c.answer + ":")
	return b.String()
}

// Variant keys stored in Prediction.Variants.
const variantClozeText = "cloze_text"

// Predict runs cloze and/or generation for one item.
func (a *Axis) Predict(ctx context.Context, b backends.Backend, it scorers.Item, opt scorers.PredictOptions) (scorers.Prediction, error) {
	p := scorers.Prediction{ItemID: it.ID}
	mode := opt.ScoringMode
	if mode == "cloze" || mode == "both" {
		reqs := make([]backends.LLRequest, len(it.Choices))
		for i := range it.Choices {
			reqs[i] = backends.LLRequest{ID: fmt.Sprintf("%s#%c", it.ID, 'A'+i), Context: it.Prompt, Continuation: fmt.Sprintf(" %c", 'A'+i)}
		}
		res, err := b.LogLikelihood(ctx, reqs)
		switch {
		case errors.Is(err, backends.ErrUnsupported):
			p.Unsupported = true
		case err != nil:
			return p, err
		default:
			p.LogLiks = res
			// The choice texts' log-likelihoods give acc and acc_norm for
			// every cloze item, whichever target is the headline.
			for i, ch := range it.Choices {
				reqs[i].ID += "/text" // one id per request
				reqs[i].Continuation = " " + ch
			}
			full, err := b.LogLikelihood(ctx, reqs)
			target, _ := clozeTarget(opt.Options)
			switch {
			case err != nil && (target == "text" || ctx.Err() != nil):
				return p, err
			case err != nil:
				// Secondary under the letter target: a failed request leaves
				// the headline's reading alone; the notes count such items.
			default:
				raw, _ := json.Marshal(full)
				p.Variants = map[string]json.RawMessage{variantClozeText: raw}
			}
		}
	}
	if mode == "generate" || mode == "both" {
		c := cuesFor(it.Lang)
		req := backends.GenRequest{ID: it.ID, MaxTokens: opt.MaxTokens, Seed: opt.Seed, Stop: []string{"\n\n"}}
		if n, ok := opt.Options[optGenTokens].(int); ok && n > 0 {
			req.MaxTokens = n
		}
		req.MaxTokens = cmp.Or(req.MaxTokens, 16)
		text := c.instruct + "\n\n" + it.Prompt
		if opt.ChatTemplate == "always" {
			req.Messages = []backends.Message{{Role: "user", Content: text}}
		} else {
			req.Prompt = text
		}
		gens, err := b.Generate(ctx, []backends.GenRequest{req})
		if err != nil {
			return p, err
		}
		p.Generations = gens
	}
	return p, nil
}

var letterRE = regexp.MustCompile(`\b([A-Z])\b`)

// ParseLetter finds the chosen option in a generated answer: the first
// standalone capital letter naming an option. ok is false on a parse failure.
func ParseLetter(text string, n int) (int, bool) {
	for _, m := range letterRE.FindAllStringSubmatch(text, -1) {
		if i := int(m[1][0] - 'A'); i < n {
			return i, true
		}
	}
	return -1, false
}

func argmax(x []float64) (best int, margin float64) {
	best = 0
	second := math.Inf(-1)
	for i := 1; i < len(x); i++ {
		if x[i] > x[best] {
			second = x[best]
			best = i
		} else if x[i] > second {
			second = x[i]
		}
	}
	return best, x[best] - second
}

// b2f is an outcome as an item field: 1 right, 0 wrong.
func b2f(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

// lowMargin flags cloze decisions decided by less than this many nats.
const lowMargin = 0.01

// Score scores predictions; items without a usable prediction are reported, not guessed.
func (a *Axis) Score(items []scorers.Item, preds []scorers.Prediction, opt scorers.ScoreOptions) (scorers.AxisResult, error) {
	t, err := a.Tally(opt)
	if err != nil {
		return scorers.AxisResult{}, err
	}
	return scorers.ScoreAll(t, items, preds)
}

// Tally starts scoring the axis one shard at a time; a bad option is an
// error naming it.
func (a *Axis) Tally(opt scorers.ScoreOptions) (scorers.Tally, error) {
	target, err := clozeTarget(opt.Options)
	if err != nil {
		return nil, err
	}
	return &tally{axis: a.name, scorerType: a.ScorerType(), mode: opt.ScoringMode, target: target, resamples: opt.BootstrapResamples, seed: opt.Seed}, nil
}

// firstTokenLogLiks is spec §1's cloze reading: each choice's
// log-probability of the first token of its continuation. The first token
// carries the choice only when the continuations begin with distinct tokens
// and are cut alike (as many tokens each: tiny-llama cuts " D" into a space
// and a letter but " A" into one token, and a bare space's log-probability
// says nothing about D); otherwise, or when a backend gives no per-token
// values, the sum over the whole continuation decides instead. distinct
// says which rule was used.
func firstTokenLogLiks(res []backends.LLResult) (ll []float64, distinct bool) {
	ll = make([]float64, len(res))
	seen := map[int]bool{}
	distinct = true
	for _, r := range res {
		if len(r.TokenLogProbs) == 0 || len(r.Tokens) == 0 || len(r.Tokens) != len(res[0].Tokens) || seen[r.Tokens[0]] {
			distinct = false
			break
		}
		seen[r.Tokens[0]] = true
	}
	for j, r := range res {
		ll[j] = r.LogProb
		if distinct {
			ll[j] = r.TokenLogProbs[0]
		}
	}
	return ll, distinct
}

// tally accumulates an MCQ axis over shards. Every metric is a ratio of
// counts except the bootstrap CI, which needs each scored item's 0/1 outcome
// in order; that is all it keeps per item.
type tally struct {
	axis, scorerType, mode string
	target                 string // cloze_target: letter (first token, the default) | text (lm-eval's acc)
	sharedFirst            int    // cloze items whose continuations share a first token (ranked by their sums)
	resamples              int
	seed                   int64

	items  int     // items added, scorable or not
	chance float64 // sum of 1/len(choices), added in item order so any split sums alike
	scored int     // items with an item score (N)
	// correct holds each scored item's outcome in order, for the bootstrap;
	// nil when no CI is asked for.
	correct []bool

	clozeOK, genOK     float64
	clozeN, genN       int
	parseFail          int
	truncated          int
	unsupported        int
	lowConf            int
	ctxCut             int
	errored            int
	firstErr           string // the error of the first errored item, in item order
	dupChoices         int    // items with two options of the same text
	firstDup           string // the first such item, in item order
	textOK, textNormOK float64
	textN              int
	probes             probeTally
}

// Add scores one shard. It checks the whole shard before counting any of it,
// so a rejected shard leaves the tally as it was.
func (t *tally) Add(items []scorers.Item, preds []scorers.Prediction) ([]scorers.ItemScore, error) {
	if len(items) != len(preds) {
		return nil, fmt.Errorf("%s: %d items but %d predictions", t.axis, len(items), len(preds))
	}
	for i, it := range items {
		if preds[i].ItemID != it.ID {
			return nil, fmt.Errorf("%s: prediction %d is for %q, want %q", t.axis, i, preds[i].ItemID, it.ID)
		}
	}
	var out []scorers.ItemScore
	for i, it := range items {
		s, scored := t.add(it, preds[i])
		if !scored {
			continue // nothing scorable for this item; counted in Result
		}
		t.scored++
		if t.resamples > 0 {
			t.correct = append(t.correct, s.Score == 1)
		}
		out = append(out, s)
	}
	return out, nil
}

// add counts one item and returns its item score; scored is false when the
// headline scoring mode has nothing to score for it.
func (t *tally) add(it scorers.Item, p scorers.Prediction) (s scorers.ItemScore, scored bool) {
	t.items++
	t.chance += 1 / float64(len(it.Choices))
	if sameChoices(it.Choices) {
		t.dupChoices++
		t.firstDup = cmp.Or(t.firstDup, it.ID)
	}
	t.probes.add(it, p, t.mode)
	s = scorers.ItemScore{ItemID: it.ID, Source: it.Source, Lang: it.Lang, Fields: map[string]any{}}
	var clozeCorrect, genCorrect *bool
	var ll []float64     // the options' log-likelihoods, when the backend gave them
	cloze, gen := -1, -1 // the option the model chose on each path
	if contextTruncated(p) {
		t.ctxCut++
		s.Fields["context_truncated"] = true
	}
	if p.Error != "" {
		t.errored++
		t.firstErr = cmp.Or(t.firstErr, p.Error)
	}
	if p.Unsupported {
		t.unsupported++
	} else if len(p.LogLiks) == len(it.Choices) {
		var distinct bool
		ll, distinct = firstTokenLogLiks(p.LogLiks)
		if !distinct {
			t.sharedFirst++
		}
		best, margin := argmax(ll)
		cloze = best
		ok := best == it.Gold
		clozeCorrect = &ok
		t.clozeN++
		if ok {
			t.clozeOK++
		}
		s.Rating = softmaxAt(ll, it.Gold)
		s.Fields["cloze_pred"] = string(rune('A' + best))
		if margin < lowMargin {
			s.Flagged = "low_margin"
			t.lowConf++
		}
		if raw, has := p.Variants[variantClozeText]; has {
			var full []backends.LLResult
			if err := json.Unmarshal(raw, &full); err == nil && len(full) == len(it.Choices) {
				plain := make([]float64, len(full))
				norm := make([]float64, len(full))
				for j, l := range full {
					plain[j] = l.LogProb
					// lm-eval's acc_norm: per character of the choice (Python len), not byte.
					norm[j] = l.LogProb / float64(max(utf8.RuneCountInString(it.Choices[j]), 1))
				}
				b1, _ := argmax(plain)
				b2, _ := argmax(norm)
				t.textN++
				if b1 == it.Gold {
					t.textOK++
				}
				if t.target == "text" {
					ok := b1 == it.Gold
					clozeCorrect = &ok
				}
				if b2 == it.Gold {
					t.textNormOK++
				}
				s.Fields["acc"], s.Fields["acc_norm"] = b2f(b1 == it.Gold), b2f(b2 == it.Gold)
			}
		}
	}
	if len(p.Generations) > 0 {
		g := p.Generations[0]
		t.genN++
		if g.Truncated() {
			t.truncated++
		}
		pick, ok := ParseLetter(g.Text, len(it.Choices))
		correct := ok && pick == it.Gold
		genCorrect = &correct
		if !ok {
			t.parseFail++
			s.Fields["parse_fail"] = true
		} else {
			s.Fields["generate_pred"] = string(rune('A' + pick))
			gen = pick
		}
		if correct {
			t.genOK++
		}
	}
	head := clozeCorrect
	if t.mode != "cloze" {
		head = genCorrect
		if clozeCorrect != nil {
			s.Fields["cloze_correct"] = *clozeCorrect
		}
	}
	if head == nil {
		return s, false
	}
	s.Label = *head
	if *head {
		s.Score = 1
	}
	if t.mode != "cloze" {
		s.Rating = s.Score
	}
	// The audit's detector is the model's confidence in the answer it
	// chose, its label whether that answer is right: the probability of the
	// chosen option is not a function of which option is gold. Cloze's
	// choice is its most likely option; a generated answer's probability is
	// its option's share of the options' likelihoods. Without them, or
	// without a parsed answer, a path has no confidence to audit.
	if ll != nil {
		tags := map[string]string{"source": it.Source}
		if it.Register != "" {
			tags["register"] = it.Register
		}
		if cloze >= 0 {
			s.Audit = append(s.Audit, scorers.AuditRow{Detector: DetectorClozeConfidence, Rating: softmaxAt(ll, cloze), Label: *clozeCorrect, Tags: tags})
		}
		if gen >= 0 {
			s.Audit = append(s.Audit, scorers.AuditRow{Detector: DetectorGenerateConfidence, Rating: softmaxAt(ll, gen), Label: *genCorrect, Tags: tags})
		}
	}
	return s, true
}

// The detectors of the MCQ axes' leakage audit.
const (
	DetectorClozeConfidence    = "cloze_confidence"
	DetectorGenerateConfidence = "generate_confidence"
)

// VerifiableLabel names the label the judge overlay is audited against.
func (a *Axis) VerifiableLabel() (string, string) {
	return "correct", "the generated answer is the gold option"
}

// AuditDesigns describe the MCQ audit: the model's confidence in its own
// answer as the detector of its correctness (a selective-prediction
// reading), pooled by dataset or subject and by register.
func (a *Axis) AuditDesigns() []scorers.AuditDesign {
	return []scorers.AuditDesign{
		{Detector: DetectorClozeConfidence, DetectorIs: "the model's probability of the option it chose by cloze (softmax over the options' log-likelihoods)",
			Label: "correct", LabelIs: "the chosen option is the gold one"},
		{Detector: DetectorGenerateConfidence, DetectorIs: "the model's probability of the option it generated (softmax over the options' log-likelihoods)",
			Label: "correct", LabelIs: "the generated answer is the gold option"},
	}
}

// Result is the axis result over every shard added. It does not change the
// tally, so it may be called again after more shards.
func (t *tally) Result() (scorers.AxisResult, error) {
	r := scorers.AxisResult{Axis: t.axis, Version: Version, ScorerType: t.scorerType, N: t.scored}
	if t.items > 0 {
		r.Chance = t.chance / float64(t.items)
	}
	frac := func(k float64, n int) *float64 {
		if n == 0 {
			return nil
		}
		v := k / float64(n)
		return &v
	}
	clozeOK, clozeN := t.clozeOK, t.clozeN
	if t.target == "text" {
		clozeOK, clozeN = t.textOK, t.textN
	}
	switch t.mode {
	case "cloze":
		r.Metric = "acc_cloze"
		if t.target == "text" {
			r.Metric = "acc_cloze_text"
		}
		r.Score = frac(clozeOK, clozeN)
	default:
		r.Metric = "acc_generate"
		r.Score = frac(t.genOK, t.genN)
	}
	if t.mode == "both" {
		bs := &scorers.ByScoring{Cloze: frac(clozeOK, clozeN), Generate: frac(t.genOK, t.genN), ParseFail: t.parseFail}
		if bs.Cloze != nil && bs.Generate != nil {
			gap := *bs.Cloze - *bs.Generate
			bs.Gap = &gap
		}
		r.ByScoring = bs
	}
	if t.unsupported > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("cloze unsupported by the backend for %d items: no cloze score is reported for them", t.unsupported))
		if t.mode == "cloze" && t.clozeN == 0 {
			r.Metric = "unsupported"
		}
	}
	if t.genN > 0 {
		r.TruncationRate = float64(t.truncated) / float64(t.genN)
		scorers.WarnTruncation(&r)
	}
	r.Secondary = map[string]any{"low_conf_items": t.lowConf, "parse_fail": t.parseFail}
	for k, v := range t.probes.signals() {
		r.Secondary[k] = v
	}
	if t.textN > 0 && t.textN < t.clozeN {
		r.Notes = append(r.Notes, fmt.Sprintf("acc and acc_norm are over %d of %d cloze items: the backend gave no choice-text log-likelihoods for the rest", t.textN, t.clozeN))
	}
	if t.textN > 0 {
		r.Secondary["acc"] = t.textOK / float64(t.textN)
		r.Secondary["acc_norm"] = t.textNormOK / float64(t.textN)
		r.Secondary["acc_first_token_letter"] = t.clozeOK / float64(max(t.clozeN, 1))
	}
	if t.clozeN > 0 {
		if t.target == "text" {
			r.Notes = append(r.Notes, "cloze headline: cloze_target text, the choice texts' full log-likelihood (lm-eval acc); acc_norm divides it by the choice's characters; acc_first_token_letter is the spec §1 reading")
		} else {
			r.Notes = append(r.Notes, "cloze: each choice ranked by the log-probability of the first token of its letter continuation (' A', ' B', ...), spec §1")
		}
		if t.sharedFirst > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%d items' choice continuations do not begin with distinct tokens, cut alike (or the backend gave no per-token log-probabilities): they are ranked by the sum over the whole continuation instead", t.sharedFirst))
		}
	}
	if t.dupChoices > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("WARNING: %d items have two options with the same text (first: %s): no reply can tell them apart, so the gold option may be unreachable or doubled; check the dataset", t.dupChoices, t.firstDup))
	}
	if t.errored > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d items could not be answered by the model (first error: %s)", t.errored, t.firstErr))
	}
	if t.ctxCut > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d items had their prompt left-truncated to fit the model's context window", t.ctxCut))
		r.Secondary["context_truncated_items"] = t.ctxCut
	}
	if missing := t.items - r.N; missing > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d of %d items have no scorable prediction and are not scored", missing, t.items))
	}
	if r.N > 1 && t.resamples > 0 {
		ci, err := scorers.HeadlineCI(r.Metric, r.N, func(i int) scorers.ItemScore {
			if t.correct[i] {
				return scorers.ItemScore{Score: 1}
			}
			return scorers.ItemScore{}
		}, t.resamples, uint64(t.seed))
		if err == nil {
			r.CI95 = ci
		}
	}
	return r, nil
}

// sameChoices reports whether two options have the same text (white space
// at the ends aside).
func sameChoices(choices []string) bool {
	seen := make(map[string]bool, len(choices))
	for _, c := range choices {
		c = strings.TrimSpace(c)
		if seen[c] {
			return true
		}
		seen[c] = true
	}
	return false
}

func contextTruncated(p scorers.Prediction) bool {
	for _, l := range p.LogLiks {
		if l.ContextTruncated > 0 {
			return true
		}
	}
	for _, g := range p.Generations {
		if g.PromptTruncated > 0 {
			return true
		}
	}
	return false
}

// softmaxAt is the normalised probability of choice k among the choices.
func softmaxAt(ll []float64, k int) float64 {
	m := math.Inf(-1)
	for _, v := range ll {
		m = math.Max(m, v)
	}
	var z float64
	for _, v := range ll {
		z += math.Exp(v - m)
	}
	return math.Exp(ll[k]-m) / z
}
