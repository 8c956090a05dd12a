package probes

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers"
)

func mcq(id string, gold int, choices ...string) scorers.Item {
	prompt := "Soalan: Apakah jawapannya?\n" + renderChoices(choices) + "Jawapan:"
	return scorers.Item{ID: id, Dataset: "d", Prompt: prompt, Choices: choices, Gold: gold}
}

func TestShuffle(t *testing.T) {
	it := mcq("d/1", 2, "satu", "dua", "tiga", "empat")
	orig := slices.Clone(it.Choices)
	a := Shuffle(it, 42)
	if !slices.Equal(it.Choices, orig) || it.Gold != 2 {
		t.Fatal("input item modified")
	}
	if a.Choices[a.Gold] != "tiga" {
		t.Fatalf("gold did not follow: %v gold %d", a.Choices, a.Gold)
	}
	if slices.Equal(a.Choices, orig) {
		t.Fatal("identity permutation")
	}
	sorted := slices.Sorted(slices.Values(a.Choices))
	if !slices.Equal(sorted, slices.Sorted(slices.Values(orig))) {
		t.Fatalf("not a permutation: %v", a.Choices)
	}
	if want := "Soalan: Apakah jawapannya?\n" + renderChoices(a.Choices) + "Jawapan:"; a.Prompt != want {
		t.Fatalf("prompt not re-rendered:\n%s", a.Prompt)
	}
	if b := Shuffle(it, 42); !reflect.DeepEqual(a, b) {
		t.Fatal("not deterministic")
	}
	// Seed and id both matter.
	diffSeed, diffID := 0, 0
	for s := uint64(0); s < 50; s++ {
		if !slices.Equal(Shuffle(it, s).Choices, Shuffle(it, s+1000).Choices) {
			diffSeed++
		}
		other := it
		other.ID = fmt.Sprintf("d/%d", s+2)
		if !slices.Equal(Shuffle(it, s).Choices, Shuffle(other, s).Choices) {
			diffID++
		}
	}
	if diffSeed < 35 || diffID < 35 {
		t.Fatalf("variants barely depend on seed (%d/50) or id (%d/50)", diffSeed, diffID)
	}
}

// TestShuffleGolden compares permutations with an independent Python
// re-implementation of PCG-DXSM, FNV-1a and the draw
// (testdata/dedup/probes_shuffle_reference.py). A change here changes every
// published shuffle_drop.
func TestShuffleGolden(t *testing.T) {
	b, err := os.ReadFile("../../../testdata/dedup/probes_shuffle_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		ID      string `json:"id"`
		N       int    `json:"n"`
		Gold    int    `json:"gold"`
		Seed    uint64 `json:"seed"`
		Perm    []int  `json:"perm"`
		NewGold int    `json:"new_gold"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 5 {
		t.Fatalf("%d golden cases", len(cases))
	}
	for _, c := range cases {
		choices := make([]string, c.N)
		for i := range choices {
			choices[i] = fmt.Sprintf("opt%d", i)
		}
		got := Shuffle(mcq(c.ID, c.Gold, choices...), c.Seed)
		want := make([]string, c.N)
		for i, p := range c.Perm {
			want[i] = choices[p]
		}
		if !slices.Equal(got.Choices, want) || got.Gold != c.NewGold {
			t.Errorf("Shuffle(%s, seed %d) = %v gold %d, want %v gold %d", c.ID, c.Seed, got.Choices, got.Gold, want, c.NewGold)
		}
	}
}

func TestShuffleNeverIdentityAndUniform(t *testing.T) {
	for n := 2; n <= 6; n++ {
		choices := make([]string, n)
		for i := range choices {
			choices[i] = fmt.Sprint(i)
		}
		counts := map[string]int{}
		const trials = 6000
		for s := 0; s < trials; s++ {
			it := mcq(fmt.Sprintf("x/%d", s), s%n, choices...)
			sh := Shuffle(it, 7)
			if slices.Equal(sh.Choices, choices) {
				t.Fatalf("n=%d: identity for item %s", n, it.ID)
			}
			if sh.Choices[sh.Gold] != choices[it.Gold] {
				t.Fatalf("n=%d: gold lost", n)
			}
			counts[strings.Join(sh.Choices, "")]++
		}
		if n == 3 {
			// 5 non-identity permutations, each 1/5: 1200 expected.
			if len(counts) != 5 {
				t.Fatalf("n=3: %d distinct permutations", len(counts))
			}
			for p, c := range counts {
				if c < 1050 || c > 1350 {
					t.Errorf("n=3: permutation %s drawn %d times of %d", p, c, trials)
				}
			}
		}
	}
	one := mcq("x", 0, "only")
	if got := Shuffle(one, 1); !slices.Equal(got.Choices, one.Choices) || got.Gold != 0 {
		t.Fatal("single option changed")
	}
}

func TestUnanswerable(t *testing.T) {
	items := []scorers.Item{
		mcq("d/1", 1, "Kuala Lumpur", "Putrajaya", "Johor Bahru", "Ipoh"),
		mcq("d/2", 0, "Sungai Pahang", "Sungai Perak", "Sungai Kelantan", "Sungai Muda"),
		mcq("d/3", 3, "1957", "1963", "1965", "1946"),
		mcq("d/4", 2, "PUTRAJAYA", "Melaka", "Seremban", "Kuantan"),
	}
	other := mcq("e/1", 0, "x", "y")
	other.Dataset = "e"
	pool := NewPool(append(items, other))
	for _, it := range items {
		for seed := uint64(0); seed < 20; seed++ {
			u, err := pool.Unanswerable(it, seed)
			if err != nil {
				t.Fatal(err)
			}
			if u.Gold != -1 {
				t.Fatalf("%s: gold %d, want -1", it.ID, u.Gold)
			}
			repl := u.Choices[it.Gold]
			for i, c := range it.Choices {
				if i != it.Gold && u.Choices[i] != c {
					t.Fatalf("%s: option %d changed", it.ID, i)
				}
				if canon(repl) == canon(c) {
					t.Fatalf("%s: replacement %q equals option %d", it.ID, repl, i)
				}
			}
			if repl == "x" || repl == "y" {
				t.Fatalf("%s: replacement from another dataset", it.ID)
			}
			if !strings.Contains(u.Prompt, fmt.Sprintf("%c. %s\n", 'A'+it.Gold, repl)) {
				t.Fatalf("%s: prompt not rewritten: %q", it.ID, u.Prompt)
			}
			again, _ := pool.Unanswerable(it, seed)
			if !reflect.DeepEqual(u, again) {
				t.Fatal("not deterministic")
			}
		}
	}
	// d/1's gold "Putrajaya" is d/4's distractor... no: d/4's gold is
	// "Seremban"; its distractor "PUTRAJAYA" must never come back as d/1's
	// replacement (same answer, other case).
	for seed := uint64(0); seed < 200; seed++ {
		u, _ := pool.Unanswerable(items[0], seed)
		if strings.EqualFold(u.Choices[1], "putrajaya") {
			t.Fatal("the right answer came back")
		}
	}

	// Length matching: with 16 draws from a big pool, the replacement is
	// close in length to the gold option.
	var big []scorers.Item
	for i := 0; i < 200; i++ {
		big = append(big, mcq(fmt.Sprintf("b/%d", i), 0, "gold", strings.Repeat("x", 1+i%40), strings.Repeat("y", 1+(i*7)%40)))
	}
	bp := NewPool(big)
	long := mcq("b/q", 0, strings.Repeat("g", 30), "p", "q")
	u, err := bp.Unanswerable(long, 3)
	if err != nil {
		t.Fatal(err)
	}
	if l := len(u.Choices[0]); l < 24 || l > 36 {
		t.Errorf("replacement length %d for a 30-character gold", l)
	}

	// NLI-like: every distractor is one of the item's own options.
	nli := []scorers.Item{mcq("n/1", 0, "entailment", "contradiction", "neutral"), mcq("n/2", 2, "entailment", "contradiction", "neutral")}
	for i := range nli {
		nli[i].Dataset = "nli"
	}
	if _, err := NewPool(nli).Unanswerable(nli[0], 1); !errors.Is(err, ErrNoReplacement) {
		t.Fatalf("NLI: err = %v, want ErrNoReplacement", err)
	}
	if _, err := pool.Unanswerable(scorers.Item{ID: "gen", Gold: -1}, 1); err == nil {
		t.Fatal("non-MCQ item accepted")
	}
}

func TestShuffleDrop(t *testing.T) {
	T, F := true, false
	for _, c := range []struct {
		orig, sh []bool
		want     float64
	}{
		{[]bool{T, T, T, T}, []bool{T, T, T, T}, 0},
		{[]bool{T, T, T, F}, []bool{T, F, F, F}, 0.5},   // 0.75 -> 0.25
		{[]bool{F, F, T, F}, []bool{T, T, F, F}, -0.25}, // gained
	} {
		if got := ShuffleDrop(c.orig, c.sh); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("ShuffleDrop(%v, %v) = %v, want %v", c.orig, c.sh, got, c.want)
		}
	}
	if !math.IsNaN(ShuffleDrop(nil, nil)) || !math.IsNaN(ShuffleDrop([]bool{T}, nil)) {
		t.Error("empty or mismatched input should be NaN")
	}
}

func TestUnanswerableDrop(t *testing.T) {
	gold := []int{0, 1, 2, 3, 0, 1}
	orig := []int{0, 1, 2, 0, 0, -1}  // items 0,1,2,4 right; 3 wrong; 5 unparsed
	probe := []int{0, 2, 2, 0, -1, 1} // 0 and 2 keep their letter; 1 moved; 4 unparsed
	// Counted: items 0, 1, 2 (4 has no probe pick): 2 of 3 kept the letter.
	if got := UnanswerableDrop(gold, orig, probe); math.Abs(got-2.0/3) > 1e-12 {
		t.Errorf("got %v, want 2/3", got)
	}
	// A memoriser keeps every letter; a reader never does.
	if got := UnanswerableDrop([]int{1, 2}, []int{1, 2}, []int{1, 2}); got != 1 {
		t.Errorf("memoriser: %v", got)
	}
	if got := UnanswerableDrop([]int{1, 2}, []int{1, 2}, []int{0, 3}); got != 0 {
		t.Errorf("reader: %v", got)
	}
	if !math.IsNaN(UnanswerableDrop([]int{1}, []int{0}, []int{0})) || !math.IsNaN(UnanswerableDrop([]int{1}, nil, nil)) {
		t.Error("no counted item or mismatched input should be NaN")
	}
}
