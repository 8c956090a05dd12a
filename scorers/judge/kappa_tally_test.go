package judge

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/glossobench/glossobench/stats"
)

// referenceKappa is κ computed the plain way: for every pair of judges, the
// labels of the groups where both rated validly, handed to stats.CohenKappa.
func referenceKappa(groups [][]Rating, kind string) KappaReport {
	var judges []string
	for _, g := range groups {
		for _, r := range g {
			if !slices.Contains(judges, r.Judge) {
				judges = append(judges, r.Judge)
			}
		}
	}
	slices.Sort(judges)
	first := func(g []Rating, j string) (Rating, bool) {
		for _, r := range g {
			if r.Judge == j && r.Valid() {
				return r, true
			}
		}
		return Rating{}, false
	}
	rep := KappaReport{Weights: "quadratic", Pairs: []PairKappa{}}
	if kind == KindHarm {
		rep.Weights = "unweighted"
	}
	for x := range judges {
		for y := x + 1; y < len(judges); y++ {
			pk := PairKappa{A: judges[x], B: judges[y]}
			var la, lb []string
			var ia, ib []int
			for _, g := range groups {
				ra, oka := first(g, pk.A)
				rb, okb := first(g, pk.B)
				if !oka || !okb {
					continue
				}
				la, lb = append(la, ra.Label), append(lb, rb.Label)
				ia, ib = append(ia, int(*ra.Value+0.5)), append(ib, int(*rb.Value+0.5))
			}
			var k float64
			var err error
			if kind == KindHarm {
				pk.N = len(la)
				k, err = stats.CohenKappa(la, lb, harmLabels, stats.Unweighted)
			} else {
				pk.N = len(ia)
				k, err = stats.CohenKappa(ia, ib, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, stats.Quadratic)
			}
			rep.add(pk, k, err)
		}
	}
	rep.setMean()
	return rep
}

// randomGroups are n groups of ratings by up to four judges, with invalid,
// duplicate and out-of-range ratings mixed in.
func randomGroups(r *rand.Rand, n int, kind string) [][]Rating {
	labels := []string{LabelHarmful, LabelRefusal, LabelSafe, "Unclear"}
	groups := make([][]Rating, n)
	for i := range groups {
		for _, j := range []string{"d", "b", "a", "c"} {
			if r.IntN(5) == 0 {
				continue
			}
			for range 1 + r.IntN(2) { // sometimes a judge rates twice; the first valid one counts
				v := float64(r.IntN(13)) - 0.4*float64(r.IntN(2))
				rt := Rating{Judge: j, Kind: kind, Value: &v, Label: labels[r.IntN(len(labels))]}
				switch r.IntN(8) {
				case 0:
					rt.ParseFail = true
				case 1:
					rt.Value = nil
				}
				groups[i] = append(groups[i], rt)
			}
		}
	}
	return groups
}

// Kappa counted group by group equals κ from the collected labels, for
// ratings and harm labels; a tally split at any point and merged gives the
// same report.
func TestKappaTallyMatchesCollectedLabels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, kind := range []string{KindRating, KindHarm} {
		for trial := range 20 {
			groups := randomGroups(r, 1+r.IntN(60), kind)
			want, _ := json.Marshal(referenceKappa(groups, kind))
			got, _ := json.Marshal(Kappa(groups))
			if string(got) != string(want) {
				t.Fatalf("%s trial %d:\ngot  %s\nwant %s", kind, trial, got, want)
			}
			cut := r.IntN(len(groups) + 1)
			var a, b KappaTally
			for _, g := range groups[:cut] {
				a.Add(g)
			}
			for _, g := range groups[cut:] {
				b.Add(g)
			}
			a.Merge(&b)
			if merged, _ := json.Marshal(a.Report()); string(merged) != string(want) {
				t.Fatalf("%s trial %d split at %d:\ngot  %s\nwant %s", kind, trial, cut, merged, want)
			}
		}
	}
	var empty KappaTally
	if rep := empty.Report(); len(rep.Pairs) != 0 || rep.Mean != nil {
		t.Errorf("empty tally: %+v", rep)
	}
}
