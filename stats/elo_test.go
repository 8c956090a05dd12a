package stats

import (
	"errors"
	"math"
	"testing"
)

func TestEloHandComputed(t *testing.T) {
	// Two players at 1000: expected 0.5, a win moves 16 points with K=32.
	r, err := Elo([]Match{{"a", "b", 1}}, EloOptions{KeepOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	if r["a"] != 1016 || r["b"] != 984 {
		t.Errorf("after one win: %v, want a=1016 b=984", r)
	}
	// Second match b beats a: expected for b = 1/(1+10^(32/400)).
	r, _ = Elo([]Match{{"a", "b", 1}, {"b", "a", 1}}, EloOptions{KeepOrder: true})
	eb := 1 / (1 + math.Pow(10, 32.0/400))
	if want := 984 + 32*(1-eb); math.Abs(r["b"]-want) > 1e-9 {
		t.Errorf("b = %v, want %v", r["b"], want)
	}
	// Ratings are zero-sum.
	if s := r["a"] + r["b"]; math.Abs(s-2000) > 1e-9 {
		t.Errorf("sum of ratings %v, want 2000", s)
	}
}

func TestEloSeededOrder(t *testing.T) {
	g := loadRefValues(t)
	ms := goldenMatches(g)
	r1, _ := Elo(ms, EloOptions{Seed: 1})
	r2, _ := Elo(ms, EloOptions{Seed: 1})
	r3, _ := Elo(ms, EloOptions{Seed: 2})
	same, differ := true, false
	for p := range r1 {
		same = same && r1[p] == r2[p]
		differ = differ || r1[p] != r3[p]
	}
	if !same || !differ {
		t.Errorf("seeded order: same seed equal %v, other seed differs %v", same, differ)
	}
	for _, bad := range [][]Match{nil, {{"a", "a", 1}}, {{"a", "b", 2}}, {{"", "b", 1}}} {
		if _, err := Elo(bad, EloOptions{}); err == nil {
			t.Errorf("Elo(%v): want error", bad)
		}
	}
}

func TestBradleyTerryNoMLE(t *testing.T) {
	// c never wins: the MLE sends c to -infinity.
	ms := []Match{{"a", "b", 1}, {"b", "a", 1}, {"a", "c", 1}, {"b", "c", 1}}
	if _, err := BradleyTerry(ms, BTOptions{}); !errors.Is(err, ErrNoMLE) {
		t.Errorf("never-winning player: err = %v, want ErrNoMLE", err)
	}
	r, err := BradleyTerry(ms, BTOptions{Prior: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !(r["c"] < r["a"] && r["c"] < r["b"]) {
		t.Errorf("with a prior c should rate lowest: %v", r)
	}
	// Two groups that each win and lose inside, but {a,b} always beat {c,d}.
	ms = []Match{{"a", "b", 1}, {"b", "a", 1}, {"c", "d", 1}, {"d", "c", 1}, {"a", "c", 1}, {"b", "d", 1}}
	if _, err := BradleyTerry(ms, BTOptions{}); !errors.Is(err, ErrNoMLE) {
		t.Errorf("dominating group: err = %v, want ErrNoMLE", err)
	}
	// Equal records give equal ratings at the Initial value.
	r, err = BradleyTerry([]Match{{"a", "b", 1}, {"b", "a", 1}, {"a", "b", 0.5}}, BTOptions{})
	if err != nil || math.Abs(r["a"]-1000) > 1e-9 || math.Abs(r["b"]-1000) > 1e-9 {
		t.Errorf("balanced pair: %v (%v), want both 1000", r, err)
	}
}

func TestRatingsBootstrap(t *testing.T) {
	g := loadRefValues(t)
	ms := goldenMatches(g)
	rate := func(m []Match) (map[string]float64, error) { return BradleyTerry(m, BTOptions{}) }
	out, skipped, err := RatingsBootstrap(ms, rate, 150, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 6 || skipped != 0 {
		t.Fatalf("got %d players, %d skipped", len(out), skipped)
	}
	for i, r := range out {
		if !(r.Lo < r.Rating && r.Rating < r.Hi) {
			t.Errorf("%s: %v outside [%v, %v]", r.Player, r.Rating, r.Lo, r.Hi)
		}
		if i > 0 && out[i-1].Rating < r.Rating {
			t.Error("not sorted best first")
		}
	}
	// The generator's strengths increase p0 < ... < p5 by 0.6 logits a step;
	// with 400 matches the ends are clear, neighbours at the bottom may swap.
	if out[0].Player != "p5" || (out[5].Player != "p0" && out[4].Player != "p0") {
		t.Errorf("order %v", out)
	}
	elo := func(m []Match) (map[string]float64, error) { return Elo(m, EloOptions{Seed: 3}) }
	if _, _, err := RatingsBootstrap(ms, elo, 100, 1, 0.95); err != nil {
		t.Error(err)
	}
}
