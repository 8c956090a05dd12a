package backends

import (
	"slices"
	"strings"
	"testing"
)

// The context policy every backend applies, case by case.
func TestFitGeneration(t *testing.T) {
	cases := []struct {
		n, window, maxTokens int
		strict               bool
		cut, maxGen          int
		err                  string
	}{
		{n: 10, window: 64, maxTokens: 16, maxGen: 16},
		{n: 60, window: 64, maxTokens: 16, cut: 12, maxGen: 16},     // room 48
		{n: 60, window: 64, maxTokens: 100, cut: 28, maxGen: 32},    // the answer keeps half the window
		{n: 40, window: 64, maxTokens: 0, cut: 8, maxGen: 32},       // 0 is DefaultMaxTokens
		{n: 60, window: 64, maxTokens: 16, strict: true, maxGen: 4}, // strict: no cut, the window stops it
		{n: 64, window: 64, maxTokens: 16, strict: true, err: "leaves no room in the context size 64"},
	}
	for _, c := range cases {
		cut, maxGen, err := FitGeneration(c.n, c.window, c.maxTokens, c.strict)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: err = %v", c, err)
			}
			continue
		}
		if err != nil || cut != c.cut || maxGen != c.maxGen {
			t.Errorf("%+v: got cut %d maxGen %d err %v", c, cut, maxGen, err)
		}
	}
}

func TestFitScore(t *testing.T) {
	if cut, err := FitScore(65, 60, 64, false); cut != 0 || err != nil {
		t.Errorf("fits: %d, %v", cut, err)
	}
	if cut, err := FitScore(70, 60, 64, false); cut != 5 || err != nil {
		t.Errorf("over by 5: %d, %v", cut, err)
	}
	if _, err := FitScore(70, 60, 64, true); err == nil || !strings.Contains(err.Error(), "strict_context") {
		t.Errorf("strict: %v", err)
	}
	if _, err := FitScore(70, 6, 64, false); err == nil || !strings.Contains(err.Error(), "continuation alone") {
		t.Errorf("continuation over the window: %v", err)
	}
	if got := CutLeft([]int{1, 2, 3, 4, 5}, 2); !slices.Equal(got, []int{1, 4, 5}) {
		t.Errorf("CutLeft = %v", got)
	}
}
