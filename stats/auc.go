package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrOneClass is returned when the labels hold only one class, so no
// yes/no pair exists and the AUC is undefined (sklearn raises ValueError).
var ErrOneClass = errors.New("stats: only one class in labels; AUC undefined")

// ROCAUC is the area under the ROC curve: the chance that a random yes row
// gets a higher score than a random no row, ties counting half. It equals
// sklearn.metrics.roc_auc_score for binary labels.
func ROCAUC(labels []bool, scores []float64) (float64, error) {
	return WeightedROCAUC(labels, scores, nil)
}

// WeightedROCAUC is ROCAUC with a non-negative weight per row; a pair counts
// with the product of its weights. With nil weights every row weighs 1. It
// equals roc_auc_score(..., sample_weight=weights).
func WeightedROCAUC(labels []bool, scores, weights []float64) (float64, error) {
	if err := checkScored(labels, scores, weights); err != nil {
		return 0, err
	}
	order := sortedByScore(scores)
	// Walk the rows from the lowest score up, one tie group at a time: each
	// yes row beats the no weight below its group and ties half of its own.
	var negBelow, sum, posTotal float64
	for i := 0; i < len(order); {
		j := i
		var pos, neg float64
		for ; j < len(order) && scores[order[j]] == scores[order[i]]; j++ {
			w := 1.0
			if weights != nil {
				w = weights[order[j]]
			}
			if labels[order[j]] {
				pos += w
			} else {
				neg += w
			}
		}
		sum += pos * (negBelow + neg/2)
		negBelow += neg
		posTotal += pos
		i = j
	}
	if posTotal == 0 || negBelow == 0 {
		return 0, ErrOneClass
	}
	return sum / (posTotal * negBelow), nil
}

// AveragePrecision summarises the precision-recall curve as the sum over
// distinct score thresholds, highest first, of precision times the gain in
// recall. It equals sklearn.metrics.average_precision_score for binary labels
// (no interpolation; tied scores form one threshold).
func AveragePrecision(labels []bool, scores []float64) (float64, error) {
	if err := checkScored(labels, scores, nil); err != nil {
		return 0, err
	}
	order := sortedByScore(scores)
	var totalPos float64
	for _, y := range labels {
		if y {
			totalPos++
		}
	}
	if totalPos == 0 {
		return 0, fmt.Errorf("stats: no positive labels; average precision undefined")
	}
	var tp, fp, ap, lastRecall float64
	for i := len(order) - 1; i >= 0; {
		j := i
		for ; j >= 0 && scores[order[j]] == scores[order[i]]; j-- {
			if labels[order[j]] {
				tp++
			} else {
				fp++
			}
		}
		recall := tp / totalPos
		ap += (recall - lastRecall) * tp / (tp + fp)
		lastRecall = recall
		i = j
	}
	return ap, nil
}

// MacroOneVsRestAUC is the unweighted mean over classes of the AUC of
// probs[i][k] for "row i is class k" against the rest, like
// roc_auc_score(classes, probs, multi_class="ovr", average="macro").
// classes[i] indexes the columns of probs; every class needs at least one row.
func MacroOneVsRestAUC(classes []int, probs [][]float64) (float64, error) {
	if len(classes) != len(probs) {
		return 0, fmt.Errorf("stats: %d classes but %d probability rows", len(classes), len(probs))
	}
	if len(probs) == 0 {
		return 0, errors.New("stats: no rows")
	}
	k := len(probs[0])
	if k < 2 {
		return 0, errors.New("stats: one-vs-rest AUC needs at least two classes")
	}
	labels := make([]bool, len(classes))
	col := make([]float64, len(classes))
	var sum float64
	for c := 0; c < k; c++ {
		for i, row := range probs {
			if len(row) != k {
				return 0, fmt.Errorf("stats: row %d has %d probabilities, want %d", i, len(row), k)
			}
			if classes[i] < 0 || classes[i] >= k {
				return 0, fmt.Errorf("stats: row %d has class %d outside [0,%d)", i, classes[i], k)
			}
			labels[i] = classes[i] == c
			col[i] = row[c]
		}
		a, err := ROCAUC(labels, col)
		if err != nil {
			return 0, fmt.Errorf("stats: class %d: %w", c, err)
		}
		sum += a
	}
	return sum / float64(k), nil
}

func checkScored(labels []bool, scores, weights []float64) error {
	if len(labels) != len(scores) {
		return fmt.Errorf("stats: %d labels but %d scores", len(labels), len(scores))
	}
	if weights != nil && len(weights) != len(scores) {
		return fmt.Errorf("stats: %d scores but %d weights", len(scores), len(weights))
	}
	for i, s := range scores {
		if math.IsNaN(s) {
			return fmt.Errorf("stats: score %d is NaN", i)
		}
		if weights != nil && (weights[i] < 0 || math.IsNaN(weights[i]) || math.IsInf(weights[i], 0)) {
			return fmt.Errorf("stats: weight %d is %v; want a finite value ≥ 0", i, weights[i])
		}
	}
	return nil
}

// sortedByScore returns row indices in ascending score order.
func sortedByScore(scores []float64) []int {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case scores[a] < scores[b]:
			return -1
		case scores[a] > scores[b]:
			return 1
		}
		return 0
	})
	return order
}
