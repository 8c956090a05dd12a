package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/stats"
)

// VariantKey is where a prediction keeps its judges' ratings.
const VariantKey = "judge"

// DefaultFloor is the agreement below which an item is flagged low_conf.
const DefaultFloor = 0.5

// Ensemble is N judges rating the same requests.
type Ensemble struct {
	Judges []*Judge
	Floor  float64 // agreement floor; items below it are low_conf
	// Fatal reports whether a judge's error will repeat on every request
	// (the model computes NaN, its server refuses the requests); RateInto
	// then stops at the first one and returns it as a *Failure. nil: every
	// error is retried and then recorded as a dropped rating.
	Fatal func(error) bool
}

// Close closes the judges.
func (e *Ensemble) Close() {
	for _, j := range e.Judges {
		j.Close()
	}
}

// Rate asks every judge for every request, judges in parallel. The result is
// request-major: ratings[i*len(Judges)+k] is judge k on request i.
func (e *Ensemble) Rate(ctx context.Context, reqs []Request) ([]Rating, error) {
	per := make([][]Rating, len(e.Judges))
	var wg sync.WaitGroup
	for k, j := range e.Judges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			per[k], _ = j.Rate(ctx, reqs)
		}()
	}
	wg.Wait()
	out := make([]Rating, 0, len(reqs)*len(e.Judges))
	for i := range reqs {
		for k := range e.Judges {
			out = append(out, per[k][i])
		}
	}
	return out, ctx.Err()
}

// Missing returns the requests the named judge has not answered yet in the
// predictions' stored ratings: a resumed run never pays for a rating twice.
// Valid ratings and parse failures count as answered (asking again at
// temperature 0 would get the same reply); dropped ones are asked again.
func Missing(reqs []Request, preds []scorers.Prediction, judgeName string) ([]Request, error) {
	done := map[string]bool{}
	for _, p := range preds {
		rs, err := FromPrediction(p)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if r.Judge == judgeName && !r.Dropped {
				done[fmt.Sprintf("%s\x00%d\x00%s", r.ItemID, r.Turn, r.Kind)] = true
			}
		}
	}
	var out []Request
	for _, r := range reqs {
		if !done[fmt.Sprintf("%s\x00%d\x00%s", r.ItemID, r.Turn, r.Kind)] {
			out = append(out, r)
		}
	}
	return out, nil
}

// JudgeCount is what one judge did in RateInto.
type JudgeCount struct {
	Judge     string `json:"judge"`
	Reused    int    `json:"reused"` // requests already rated in the predictions
	Asked     int    `json:"asked"`
	Valid     int    `json:"valid"`
	ParseFail int    `json:"parse_fail"`
	Dropped   int    `json:"dropped"`
}

// RateInto is the Judge activity's core: each judge (in parallel) rates the
// requests it has not answered yet in preds (see Missing), and the ratings
// are attached to preds (Variants["judge"]), ready to checkpoint. On a
// cancelled ctx what was rated is still attached.
func (e *Ensemble) RateInto(ctx context.Context, reqs []Request, preds []scorers.Prediction) ([]JudgeCount, error) {
	counts := make([]JudgeCount, len(e.Judges))
	todo := make([][]Request, len(e.Judges))
	for k, j := range e.Judges {
		m, err := Missing(reqs, preds, j.cfg.Name)
		if err != nil {
			return nil, err
		}
		todo[k] = m
		counts[k] = JudgeCount{Judge: j.cfg.Name, Reused: len(reqs) - len(m), Asked: len(m)}
	}
	got := make([][]Rating, len(e.Judges))
	fails := make([]error, len(e.Judges))
	var wg sync.WaitGroup
	for k, j := range e.Judges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[k], fails[k] = j.rate(ctx, todo[k], e.Fatal)
		}()
	}
	wg.Wait()
	for _, err := range fails {
		var f *Failure
		if errors.As(err, &f) {
			return counts, err // the stage ends; nothing of this chunk is kept
		}
	}
	var all []Rating
	for k, rs := range got {
		if ctx.Err() != nil {
			// Stopped (cancelled or out of time): a dropped rating is most
			// likely a request cut short, so it is not kept as an answer and
			// a resumed run asks again; what the judges did rate is kept.
			rs = slices.DeleteFunc(rs, func(r Rating) bool { return r.Dropped || r.ItemID == "" })
			counts[k].Asked = len(rs)
		}
		for _, r := range rs {
			switch {
			case r.Dropped:
				counts[k].Dropped++
			case r.Valid():
				counts[k].Valid++
			default:
				counts[k].ParseFail++
			}
		}
		all = append(all, rs...)
	}
	if err := Attach(preds, all); err != nil {
		return counts, err
	}
	return counts, ctx.Err()
}

// Attach stores ratings in their predictions' Variants["judge"], merged with
// what is already there: a rating replaces an earlier one by the same judge
// for the same item, turn and kind, so a resumed run can re-attach safely.
func Attach(preds []scorers.Prediction, ratings []Rating) error {
	at := make(map[string]int, len(preds))
	for i, p := range preds {
		at[p.ItemID] = i
	}
	byItem := map[string][]Rating{}
	for _, r := range ratings {
		if _, ok := at[r.ItemID]; !ok {
			return fmt.Errorf("judge: rating by %s for item %q, which has no prediction", r.Judge, r.ItemID)
		}
		byItem[r.ItemID] = append(byItem[r.ItemID], r)
	}
	for id, rs := range byItem {
		p := &preds[at[id]]
		old, err := FromPrediction(*p)
		if err != nil {
			return err
		}
		for _, r := range rs {
			old = slices.DeleteFunc(old, func(o Rating) bool {
				return o.Judge == r.Judge && o.Turn == r.Turn && o.Kind == r.Kind
			})
			old = append(old, r)
		}
		raw, err := json.Marshal(old)
		if err != nil {
			return err
		}
		if p.Variants == nil {
			p.Variants = map[string]json.RawMessage{}
		}
		p.Variants[VariantKey] = raw
	}
	return nil
}

// FromPrediction returns the ratings stored in a prediction; none is not an error.
func FromPrediction(p scorers.Prediction) ([]Rating, error) {
	raw, ok := p.Variants[VariantKey]
	if !ok {
		return nil, nil
	}
	var rs []Rating
	if err := json.Unmarshal(raw, &rs); err != nil {
		return nil, fmt.Errorf("prediction %s: variants.%s: %w", p.ItemID, VariantKey, err)
	}
	return rs, nil
}

// ByTurn groups one item's ratings of one kind by turn, turns ascending.
func ByTurn(rs []Rating, kind string) (turns []int, groups [][]Rating) {
	idx := map[int]int{}
	for _, r := range rs {
		if r.Kind != kind {
			continue
		}
		i, ok := idx[r.Turn]
		if !ok {
			i = len(turns)
			idx[r.Turn] = i
			turns = append(turns, r.Turn)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	order := make([]int, len(turns))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return turns[a] - turns[b] })
	st, sg := make([]int, len(turns)), make([][]Rating, len(turns))
	for i, o := range order {
		st[i], sg[i] = turns[o], groups[o]
	}
	return st, sg
}

// ItemAgg is the ensemble's judgement of one request.
type ItemAgg struct {
	ItemID string `json:"item_id"`
	Turn   int    `json:"turn,omitempty"`
	Kind   string `json:"kind"`
	// Score is the mean of the valid values: the 0–10 rating, or for harm the
	// share of judges saying Harmful. Nil when no judge gave a valid answer.
	Score *float64 `json:"score"`
	// Label is the most frequent harm label; a tie goes to the first of
	// Harmful, Refusal, Safe (the cautious reading).
	Label      string             `json:"label,omitempty"`
	LabelShare map[string]float64 `json:"label_share,omitempty"`
	// Agreement is 1 − std/|mean| of the ratings (population std; 1 when all
	// agree, and it can fall below 0); for harm, the share of the modal label.
	Agreement *float64 `json:"agreement"`
	LowConf   bool     `json:"low_conf,omitempty"`
	Judges    int      `json:"judges"`
	Valid     int      `json:"valid"`
	ParseFail int      `json:"parse_fail,omitempty"`
	Dropped   int      `json:"dropped,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

// Aggregate combines each group of ratings (one request, one rating per
// judge) into an ItemAgg; groups whose agreement is below floor are LowConf.
func Aggregate(ratings [][]Rating, floor float64) []ItemAgg {
	out := make([]ItemAgg, len(ratings))
	for i, g := range ratings {
		out[i] = aggregateOne(g, floor)
	}
	return out
}

func aggregateOne(g []Rating, floor float64) ItemAgg {
	a := ItemAgg{Judges: len(g)}
	if len(g) > 0 {
		a.ItemID, a.Turn, a.Kind = g[0].ItemID, g[0].Turn, g[0].Kind
	}
	var vals []float64
	counts := map[string]int{}
	for _, r := range g {
		switch {
		case r.Dropped:
			a.Dropped++
			a.Notes = append(a.Notes, r.Judge+": "+r.Note)
		case r.ParseFail || r.Value == nil || !finite(*r.Value):
			a.ParseFail++
		default:
			vals = append(vals, *r.Value)
			if r.Label != "" {
				counts[r.Label]++
			}
		}
	}
	a.Valid = len(vals)
	if len(vals) == 0 {
		return a
	}
	mean := 0.0
	for _, v := range vals {
		mean += v
	}
	mean /= float64(len(vals))
	a.Score = &mean
	var agree float64
	if a.Kind == KindHarm {
		best := 0
		for _, l := range []string{LabelHarmful, LabelRefusal, LabelSafe} {
			if counts[l] > best {
				best, a.Label = counts[l], l
			}
		}
		a.LabelShare = map[string]float64{}
		for l, c := range counts {
			a.LabelShare[l] = float64(c) / float64(len(vals))
		}
		agree = float64(best) / float64(len(vals))
	} else {
		agree = Agreement(vals)
	}
	a.Agreement = &agree
	a.LowConf = agree < floor
	return a
}

// Agreement is spec §4's inter-judge agreement of one item's ratings:
// 1 − std/|mean| with the population standard deviation. Identical ratings
// (including a single judge, or all zeros) agree fully: 1.
func Agreement(vals []float64) float64 {
	if len(vals) == 0 {
		return math.NaN()
	}
	var mean float64
	for _, v := range vals {
		mean += v
	}
	mean /= float64(len(vals))
	var ss float64
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	std := math.Sqrt(ss / float64(len(vals)))
	if std == 0 {
		return 1
	}
	return 1 - std/math.Abs(mean)
}

// PairKappa is Cohen's κ between two judges.
type PairKappa struct {
	A     string   `json:"a"`
	B     string   `json:"b"`
	N     int      `json:"n"` // items both judged validly
	Kappa *float64 `json:"kappa"`
	Note  string   `json:"note,omitempty"`
}

// KappaReport is the inter-judge agreement of an axis (spec §0 measurement profile).
type KappaReport struct {
	Weights string      `json:"weights"` // unweighted (harm labels) | quadratic (0–10 ratings)
	Pairs   []PairKappa `json:"pairs"`
	Mean    *float64    `json:"mean"` // over the pairs where κ is defined
}

// Kappa computes Cohen's κ for every pair of judges over the groups where
// both gave a valid judgement, and the mean over pairs. Harm labels use
// unweighted κ over {Harmful, Refusal, Safe}; ratings are rounded to integers
// and use quadratic-weighted κ over 0–10, since a 7 against an 8 is a smaller
// disagreement than a 2 against a 9. With fewer than two judges there is no
// pair and Mean is nil. It is a KappaTally given every group in order.
func Kappa(ratings [][]Rating) KappaReport {
	var t KappaTally
	for _, g := range ratings {
		t.Add(g)
	}
	return t.Report()
}

// Label sets of κ: harm labels, and the 0–10 rating scale.
var (
	harmLabels   = []string{LabelHarmful, LabelRefusal, LabelSafe}
	ratingLabels = 11
)

// KappaTally counts inter-judge agreement group by group (one group per item
// or turn, holding each judge's rating of it), keeping per pair of judges
// only a confusion matrix, so κ over any number of items takes constant
// memory and an axis scored shard by shard need not keep its ratings. The
// zero value is ready to use.
type KappaTally struct {
	kind   string // of the first valid rating seen: harm labels or 0–10 ratings
	judges map[string]bool
	pairs  map[[2]string]*pairCounts // by judge names in sorted order
}

type pairCounts struct {
	n         int       // groups both judged validly
	confusion []float64 // the first judge's label (row) against the second's
}

// Add counts one group's ratings.
func (t *KappaTally) Add(g []Rating) {
	if t.judges == nil {
		t.judges, t.pairs = map[string]bool{}, map[[2]string]*pairCounts{}
	}
	for _, r := range g {
		if !t.judges[r.Judge] {
			t.judges[strings.Clone(r.Judge)] = true
		}
		if t.kind == "" && r.Valid() {
			t.kind = r.Kind
		}
	}
	for x, a := range g {
		if !a.Valid() || !isFirst(g, x) {
			continue
		}
		for y, b := range g {
			if !b.Valid() || !isFirst(g, y) || a.Judge >= b.Judge {
				continue
			}
			key := [2]string{a.Judge, b.Judge}
			pc := t.pairs[key]
			if pc == nil {
				key = [2]string{strings.Clone(a.Judge), strings.Clone(b.Judge)}
				pc = &pairCounts{confusion: make([]float64, t.labels()*t.labels())}
				t.pairs[key] = pc
			}
			pc.n++
			if i, j := t.index(a), t.index(b); i >= 0 && j >= 0 {
				pc.confusion[i*t.labels()+j]++
			}
		}
	}
}

// isFirst reports whether g[i] is its judge's first valid rating in g (the
// one find returns).
func isFirst(g []Rating, i int) bool {
	for _, r := range g[:i] {
		if r.Judge == g[i].Judge && r.Valid() {
			return false
		}
	}
	return true
}

func (t *KappaTally) labels() int {
	if t.kind == KindHarm {
		return len(harmLabels)
	}
	return ratingLabels
}

// index is r's position in the label set, or -1 when it lies outside (such
// a pair counts in n but not in κ, as stats.CohenKappa ignores it).
func (t *KappaTally) index(r Rating) int {
	if t.kind == KindHarm {
		return slices.Index(harmLabels, r.Label)
	}
	v := int(math.Round(*r.Value))
	if v < 0 || v >= ratingLabels {
		return -1
	}
	return v
}

// Merge adds the counts of o, a tally of the groups that come after t's;
// both count one kind of rating (harm labels or 0–10 ratings), as every
// caller's groups do.
func (t *KappaTally) Merge(o *KappaTally) {
	if t.judges == nil {
		t.judges, t.pairs = map[string]bool{}, map[[2]string]*pairCounts{}
	}
	if t.kind == "" {
		t.kind = o.kind
	}
	for j := range o.judges {
		t.judges[j] = true
	}
	for key, op := range o.pairs {
		pc := t.pairs[key]
		if pc == nil {
			pc = &pairCounts{confusion: make([]float64, len(op.confusion))}
			t.pairs[key] = pc
		}
		pc.n += op.n
		for i, c := range op.confusion {
			pc.confusion[i] += c
		}
	}
}

// Report is κ for every pair of judges seen and the mean over the pairs
// where it is defined.
func (t *KappaTally) Report() KappaReport {
	judges := make([]string, 0, len(t.judges))
	for j := range t.judges {
		judges = append(judges, j)
	}
	slices.Sort(judges)
	rep := KappaReport{Weights: "quadratic", Pairs: []PairKappa{}}
	weights := stats.Quadratic
	if t.kind == KindHarm {
		rep.Weights, weights = "unweighted", stats.Unweighted
	}
	for x := 0; x < len(judges); x++ {
		for y := x + 1; y < len(judges); y++ {
			pk := PairKappa{A: judges[x], B: judges[y]}
			confusion := make([]float64, t.labels()*t.labels())
			if pc := t.pairs[[2]string{pk.A, pk.B}]; pc != nil {
				pk.N, confusion = pc.n, pc.confusion
			}
			k, err := stats.KappaFromConfusion(confusion, t.labels(), weights)
			rep.add(pk, k, err)
		}
	}
	rep.setMean()
	return rep
}

// add records one pair's κ, or, err not nil, why it is undefined.
func (rep *KappaReport) add(pk PairKappa, k float64, err error) {
	if err != nil {
		pk.Note = err.Error()
	} else {
		pk.Kappa = &k
	}
	rep.Pairs = append(rep.Pairs, pk)
}

// setMean sets Mean to the mean κ over the pairs where it is defined.
func (rep *KappaReport) setMean() {
	var sum float64
	var defined int
	for _, pk := range rep.Pairs {
		if pk.Kappa != nil {
			sum += *pk.Kappa
			defined++
		}
	}
	if defined > 0 {
		m := sum / float64(defined)
		rep.Mean = &m
	}
}

// OverlayRequests builds the judge-overlay requests of a verifiable axis
// (spec §4): a 0–10 rating of each generated response. Items without a
// generation (cloze-only) get no request, and so judge_quality null.
func OverlayRequests(items []scorers.Item, preds []scorers.Prediction) []Request {
	var out []Request
	for i, it := range items {
		if i >= len(preds) || len(preds[i].Generations) == 0 {
			continue
		}
		q := it.Prompt
		if len(it.Turns) > 0 {
			q = it.Turns[0]
		}
		out = append(out, Request{ItemID: it.ID, Lang: it.Lang, Question: []string{q}, Answer: []string{preds[i].Generations[0].Text}, Kind: KindRating})
	}
	return out
}

// OverlayQuality is the judge_quality of one prediction: the ensemble's mean
// 0–10 rating, or nil when no judge rated it validly (cloze-only items, parse
// failures). Put it in ItemScore.Fields["judge_quality"]; the verifiable
// score stays the headline.
func OverlayQuality(p scorers.Prediction) *float64 {
	rs, err := FromPrediction(p)
	if err != nil || len(rs) == 0 {
		return nil
	}
	_, groups := ByTurn(rs, KindRating)
	if len(groups) == 0 {
		return nil
	}
	return aggregateOne(groups[0], 0).Score
}

// DetectorOverlay is the judge overlay's detector in the leakage audit.
const DetectorOverlay = "judge_rating"

// OverlayDesign describes the overlay's audit on a verifiable axis: each
// judge's quality rating of a response as the detector, the axis's own
// verifiable outcome (label, e.g. MCQ correct, IFEval strict pass) as the
// label, which no judge produced.
func OverlayDesign(label, labelIs string) scorers.AuditDesign {
	return scorers.AuditDesign{Detector: DetectorOverlay, DetectorIs: "each judge's 0-10 quality rating of the response (judge_quality), divided by 10",
		Label: label, LabelIs: labelIs}
}

// OverlayRows are the audit rows of one overlay-rated prediction: one per
// valid judge rating, tagged by the judge (every judge rates the same
// answers, the paper's five-judge design) and by the dataset.
func OverlayRows(p scorers.Prediction, label bool, dataset string) []scorers.AuditRow {
	rs, err := FromPrediction(p)
	if err != nil {
		return nil
	}
	_, groups := ByTurn(rs, KindRating)
	if len(groups) == 0 {
		return nil
	}
	var out []scorers.AuditRow
	for _, r := range groups[0] {
		if r.Valid() {
			out = append(out, scorers.AuditRow{Detector: DetectorOverlay, Rating: *r.Value / 10, Label: label,
				Tags: map[string]string{"judge": r.Judge, "dataset": dataset}})
		}
	}
	return out
}

// OptFloor is the option of a judged axis that sets the agreement floor.
const OptFloor = "agreement_floor"

// FloorOption reads a judged axis's options: only OptFloor (items whose
// judges agree less are low_conf) is known; absent means runFloor (the
// config's run.judge_floor), or DefaultFloor when that is nil too.
func FloorOption(opts map[string]any, runFloor *float64) (float64, error) {
	const key = OptFloor
	for k := range opts {
		if k != key {
			return 0, fmt.Errorf("options.%s: unknown option (known: %s)", k, key)
		}
	}
	switch v := opts[key].(type) {
	case nil:
		if runFloor != nil {
			return *runFloor, nil
		}
		return DefaultFloor, nil
	case float64:
		return v, nil
	case int:
		return float64(v), nil
	default:
		return 0, fmt.Errorf("options.%s: want a number, got %v", key, v)
	}
}

// QualityTally is the judge overlay's scores.Extra: it stores each item's
// overlay rating as judge_quality (null for items without a generated
// response), audits the overlay's judges against the axis's verifiable
// outcome, and publishes the mean as a secondary field; the headline is
// left as the scorer made it.
type QualityTally struct {
	sum float64
	n   int
}

// Add records the overlay's rating of one scored item.
func (q *QualityTally) Add(s *scorers.ItemScore, p scorers.Prediction, it scorers.Item) {
	v := OverlayQuality(p)
	if s.Fields == nil {
		s.Fields = map[string]any{}
	}
	s.Fields["judge_quality"] = v
	// The overlay's judges are audited against the axis's verifiable
	// outcome (s.Label: MCQ correct, IFEval strict pass).
	s.Audit = append(s.Audit, OverlayRows(p, s.Label, it.Dataset)...)
	if v != nil {
		q.sum += *v
		q.n++
	}
}

// Publish sets judge_quality_mean and judge_quality_n in r's secondary fields.
func (q *QualityTally) Publish(r *scorers.AxisResult) {
	if r.Secondary == nil {
		r.Secondary = map[string]any{}
	}
	if q.n > 0 {
		r.Secondary["judge_quality_mean"] = q.sum / float64(q.n)
	} else {
		r.Secondary["judge_quality_mean"] = nil
	}
	r.Secondary["judge_quality_n"] = q.n
}
