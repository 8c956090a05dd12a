package stats

import (
	"fmt"
	"math"
	"testing"
)

func TestRankingWeightsLeaveOutNearChance(t *testing.T) {
	w, near := RankingWeights([]RankingAxis{
		{Name: "nlu", Score: 0.26, Weight: 1, Public: true},
		{Name: "knowledge", Score: 0.9, Weight: 2, Public: true, Discriminates: true},
		{Name: "cultural", Score: 0.9, Weight: 1, Discriminates: true}, // self-built
		{Name: "nlg", Score: 0.3, Weight: 0, Public: true, Discriminates: true},
	})
	if fmt.Sprint(w, near) != "map[knowledge:2] [nlu]" {
		t.Fatalf("weights %v, near chance %v", w, near)
	}
}

func TestCommonRankingUsesAxesEveryRunRanksOn(t *testing.T) {
	means, axes, left := CommonRanking([]RankingEntry{
		{Scores: map[string]float64{"a": 0.8, "b": 0.4, "c": 0.9}, Weights: map[string]float64{"a": 1, "b": 3, "c": 1}},
		{Scores: map[string]float64{"a": 0.2, "b": 0.6, "c": 0.1}, Weights: map[string]float64{"a": 1, "b": 3}}, // c near chance here
	})
	// (0.8·1 + 0.4·3)/4 = 0.5 and (0.2·1 + 0.6·3)/4 = 0.5.
	if fmt.Sprint(axes, left) != "[a b] [c]" || math.Abs(*means[0]-0.5) > 1e-12 || math.Abs(*means[1]-0.5) > 1e-12 {
		t.Fatalf("means %v %v over %v, left out %v", *means[0], *means[1], axes, left)
	}
	means, axes, _ = CommonRanking([]RankingEntry{{Weights: map[string]float64{"a": 1}, Scores: map[string]float64{"a": 1}}, {}})
	if means[0] != nil || means[1] != nil || axes != nil {
		t.Fatalf("no common axis gave %v over %v", means, axes)
	}
}
