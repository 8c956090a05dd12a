package ifeval

import "github.com/glossobench/glossobench/scorers"

// Prompt-level strict accuracy: an item's score is 1 when every instruction
// was followed under the strict reading.
func init() { scorers.RegisterStatistic(scorers.MeanStatistic("prompt_level_strict_acc")) }
