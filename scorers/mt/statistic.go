package mt

import "github.com/glossobench/glossobench/scorers"

// The mean normalised judge score: an item's score is the mean of its
// turns' judge scores / 10.
func init() { scorers.RegisterStatistic(scorers.MeanStatistic("mean_judge_score_normalized")) }
