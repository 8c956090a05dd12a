package stats

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Match is one pairwise comparison: Score is A's result, 1 for a win,
// 0.5 for a tie and 0 for a loss.
type Match struct {
	A, B  string
	Score float64
}

// EloOptions configure sequential Elo. Zero fields take the defaults.
type EloOptions struct {
	K       float64 // update step; default 32
	Initial float64 // starting rating; default 1000
	Scale   float64 // rating points per factor of 10 in odds; default 400
	// Seed shuffles the match order before rating, since sequential Elo
	// depends on it; KeepOrder rates the matches in the order given.
	Seed      uint64
	KeepOrder bool
}

func (o EloOptions) withDefaults() EloOptions {
	o.K = cmp.Or(o.K, 32)
	o.Initial = cmp.Or(o.Initial, 1000)
	o.Scale = cmp.Or(o.Scale, 400)
	return o
}

func checkMatches(matches []Match) error {
	if len(matches) == 0 {
		return fmt.Errorf("%w: no matches", ErrTooFew)
	}
	for i, m := range matches {
		if m.A == "" || m.B == "" {
			return fmt.Errorf("stats: match %d: empty player name", i)
		}
		if m.A == m.B {
			return fmt.Errorf("stats: match %d: %s plays itself", i, m.A)
		}
		if !(m.Score >= 0 && m.Score <= 1) {
			return fmt.Errorf("stats: match %d (%s vs %s): score %v outside [0, 1]", i, m.A, m.B, m.Score)
		}
	}
	return nil
}

// Elo rates players by sequential Elo updates over the matches: after each
// match A's rating moves by K·(score − expected), with
// expected = 1/(1 + 10^((R_B − R_A)/Scale)), and B's by the opposite amount.
func Elo(matches []Match, opt EloOptions) (map[string]float64, error) {
	if err := checkMatches(matches); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	order := make([]int, len(matches))
	for i := range order {
		order[i] = i
	}
	if !opt.KeepOrder {
		r := newRand(opt.Seed)
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	return eloOver(matches, order, opt), nil
}

func eloOver(matches []Match, order []int, opt EloOptions) map[string]float64 {
	rating := map[string]float64{}
	get := func(p string) float64 {
		if r, ok := rating[p]; ok {
			return r
		}
		return opt.Initial
	}
	for _, i := range order {
		m := matches[i]
		ra, rb := get(m.A), get(m.B)
		expected := 1 / (1 + math.Pow(10, (rb-ra)/opt.Scale))
		delta := opt.K * (m.Score - expected)
		rating[m.A] = ra + delta
		rating[m.B] = rb - delta
	}
	return rating
}

// BTOptions configure the Bradley–Terry fit. Zero fields take the defaults.
type BTOptions struct {
	Initial float64 // rating of the geometric-mean player; default 1000
	Scale   float64 // rating points per factor of 10 in odds; default 400
	// Prior adds this many virtual ties between every pair that met, which
	// keeps the estimate finite for a player who never wins or never loses.
	// Zero (the default) is the plain maximum-likelihood estimate.
	Prior   float64
	MaxIter int     // default 10,000
	Tol     float64 // relative change of every strength; default 1e-10
}

// ErrNoMLE reports comparisons for which the Bradley–Terry maximum-likelihood
// estimate does not exist (some player never wins or never loses against a
// part of the field).
var ErrNoMLE = errors.New("stats: Bradley–Terry MLE does not exist")

// BradleyTerry fits the Bradley–Terry model P(i beats j) = p_i/(p_i + p_j)
// by maximum likelihood with Hunter's (2004) MM iteration
// p_i ← W_i / Σ_j n_ij/(p_i + p_j), a tie counting half a win to each side,
// and returns ratings Initial + Scale·log10(p_i/geomean(p)), on the Elo scale.
func BradleyTerry(matches []Match, opt BTOptions) (map[string]float64, error) {
	if err := checkMatches(matches); err != nil {
		return nil, err
	}
	opt.Initial = cmp.Or(opt.Initial, 1000)
	opt.Scale = cmp.Or(opt.Scale, 400)
	opt.MaxIter = cmp.Or(opt.MaxIter, 10000)
	opt.Tol = cmp.Or(opt.Tol, 1e-10)
	if opt.Prior < 0 {
		return nil, fmt.Errorf("stats: negative prior %v", opt.Prior)
	}
	names := playerNames(matches)
	idx := make(map[string]int, len(names))
	for i, n := range names {
		idx[n] = i
	}
	P := len(names)
	beat := make([]float64, P*P)  // beat[i*P+j]: i's points against j
	games := make([]float64, P*P) // games[i*P+j]: matches between i and j
	for _, m := range matches {
		a, b := idx[m.A], idx[m.B]
		beat[a*P+b] += m.Score
		beat[b*P+a] += 1 - m.Score
		games[a*P+b]++
		games[b*P+a]++
	}
	if opt.Prior > 0 {
		for i := range P * P {
			if games[i] > 0 {
				games[i] += opt.Prior
				beat[i] += opt.Prior / 2
			}
		}
	}
	if err := checkStronglyConnected(names, beat); err != nil {
		return nil, err
	}
	wins := make([]float64, P)
	for i := range P {
		for j := range P {
			wins[i] += beat[i*P+j]
		}
	}
	p := make([]float64, P)
	next := make([]float64, P)
	for i := range p {
		p[i] = 1
	}
	converged := false
	for iter := 0; iter < opt.MaxIter && !converged; iter++ {
		for i := range P {
			den := 0.0
			for j := range P {
				if n := games[i*P+j]; n > 0 {
					den += n / (p[i] + p[j])
				}
			}
			next[i] = wins[i] / den
		}
		// Normalise to geometric mean 1, which fixes the free scale.
		logMean := 0.0
		for _, v := range next {
			logMean += math.Log(v)
		}
		g := math.Exp(logMean / float64(P))
		converged = true
		for i := range next {
			next[i] /= g
			if math.Abs(next[i]-p[i]) > opt.Tol*p[i] {
				converged = false
			}
		}
		p, next = next, p
	}
	if !converged {
		return nil, fmt.Errorf("stats: Bradley–Terry did not converge in %d iterations", opt.MaxIter)
	}
	ratings := make(map[string]float64, P)
	for i, n := range names {
		ratings[n] = opt.Initial + opt.Scale*math.Log10(p[i])
	}
	return ratings, nil
}

func playerNames(matches []Match) []string {
	var names []string
	for _, m := range matches {
		names = append(names, m.A, m.B)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// checkStronglyConnected verifies Zermelo's condition for a finite MLE:
// in the directed graph with an edge i→j when i took points off j, every
// player reaches every other. Otherwise some group never loses to the rest
// and its strength runs off to infinity.
func checkStronglyConnected(names []string, beat []float64) error {
	P := len(names)
	reach := func(forward bool) []bool {
		seen := make([]bool, P)
		seen[0] = true
		stack := []int{0}
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for j := range P {
				w := beat[i*P+j]
				if !forward {
					w = beat[j*P+i]
				}
				if !seen[j] && w > 0 {
					seen[j] = true
					stack = append(stack, j)
				}
			}
		}
		return seen
	}
	down, up := reach(true), reach(false)
	for i := range P {
		if !down[i] {
			return fmt.Errorf("%w: %s was never beaten by %s, directly or through a chain of results (set a prior)", ErrNoMLE, names[i], names[0])
		}
		if !up[i] {
			return fmt.Errorf("%w: %s never beat %s, directly or through a chain of results (set a prior)", ErrNoMLE, names[i], names[0])
		}
	}
	return nil
}

// RatingCI holds a player's rating and its bootstrap interval.
type RatingCI struct {
	Player string  `json:"player"`
	Rating float64 `json:"rating"`
	Lo     float64 `json:"ci_lo"`
	Hi     float64 `json:"ci_hi"`
}

// RatingsBootstrap rates the matches with rate, then rates `resamples`
// bootstrap resamples of the matches (drawn with replacement, seeded) and
// returns each player's rating with its percentile interval, sorted by
// rating, best first. A resample on which rate fails, or which lacks a
// player, is skipped for the ratings it cannot provide; skipped counts the
// failed resamples.
func RatingsBootstrap(matches []Match, rate func([]Match) (map[string]float64, error), resamples int, seed uint64, level float64) (out []RatingCI, skipped int, err error) {
	point, err := rate(matches)
	if err != nil {
		return nil, 0, err
	}
	if resamples < 1 {
		return nil, 0, fmt.Errorf("stats: needs resamples >= 1, got %d", resamples)
	}
	if !(level > 0 && level < 1) {
		return nil, 0, fmt.Errorf("stats: confidence level must be in (0, 1), got %v", level)
	}
	draws := map[string][]float64{}
	r := newRand(seed)
	sample := make([]Match, len(matches))
	for range resamples {
		for i := range sample {
			sample[i] = matches[r.IntN(len(matches))]
		}
		ratings, err := rate(sample)
		if err != nil {
			skipped++
			continue
		}
		for p, v := range ratings {
			draws[p] = append(draws[p], v)
		}
	}
	for p, v := range point {
		d := draws[p]
		slices.Sort(d)
		out = append(out, RatingCI{Player: p, Rating: v, Lo: Quantile(d, (1-level)/2), Hi: Quantile(d, (1+level)/2)})
	}
	slices.SortFunc(out, func(a, b RatingCI) int {
		if a.Rating != b.Rating {
			if a.Rating > b.Rating {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Player, b.Player)
	})
	return out, skipped, nil
}
