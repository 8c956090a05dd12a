package mcq

import "github.com/glossobench/glossobench/scorers"

// The headline of the scoring mode is the accuracy over the items that mode
// scored, and each scored item's score is 1 or 0 for that mode.
func init() {
	scorers.RegisterStatistic(scorers.MeanStatistic("acc_cloze"))
	scorers.RegisterStatistic(scorers.MeanStatistic("acc_cloze_text"))
	scorers.RegisterStatistic(scorers.MeanStatistic("acc_generate"))
}
