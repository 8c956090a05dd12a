// Package reproduce checks spec §5's promise on two runs: a rerun with
// identical pins reproduces every headline within the earlier run's
// bootstrap CI; a headline outside it is reported as non-determinism, not
// papered over.
package reproduce

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/glossobench/glossobench/infra/runfiles"
)

// Verdicts.
const (
	Reproduced     = "reproduced"      // within the earlier run's 95% CI (or equal, without one)
	NonDeterminism = "NON-DETERMINISM" // outside it
	NotComparable  = "not comparable"  // a headline on one side only
)

// Check is one headline of the earlier run and of its rerun.
type Check struct {
	Name    string      `json:"name"` // an axis, or "ms_public"
	Earlier *float64    `json:"earlier"`
	Rerun   *float64    `json:"rerun"`
	CI95    *[2]float64 `json:"earlier_ci95"`
	Verdict string      `json:"verdict"`
}

// Pins are what must be identical for the promise to hold: bench_version,
// config_hash, every plugin version and the model identity.
func Pins(r *runfiles.Result) map[string]string {
	p := map[string]string{"bench_version": r.BenchVersion, "config_hash": r.ConfigHash}
	for axis, v := range r.PluginVersions {
		p["plugin/"+axis] = v
	}
	if id := r.ModelIdentity; id != nil {
		p["model_sha256"], p["server_model"], p["model_revision"] = id.SHA256, id.ServerModel, id.Revision
	}
	return p
}

// Compare checks the rerun against the earlier run: an error when their
// pins differ (then the runs measure different things and no verdict
// holds), else one check per axis either run scored, in name order, and
// one for ms_public against ms_ci95.
func Compare(earlier, rerun *runfiles.Result) ([]Check, error) {
	pe, pr := Pins(earlier), Pins(rerun)
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(pe)) {
		if pe[k] != pr[k] {
			diff = append(diff, fmt.Sprintf("%s %q vs %q", k, pe[k], pr[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(pr)) {
		if _, ok := pe[k]; !ok {
			diff = append(diff, fmt.Sprintf("%s only in the rerun", k))
		}
	}
	if len(diff) > 0 {
		return nil, fmt.Errorf("the runs' pins differ (%v): not a rerun of the same pins", diff)
	}
	names := slices.Sorted(maps.Keys(earlier.Axes))
	for n := range rerun.Axes {
		if _, ok := earlier.Axes[n]; !ok {
			names = append(names, n)
		}
	}
	var out []Check
	for _, n := range names {
		e, r := earlier.Axes[n], rerun.Axes[n]
		out = append(out, check(n, e.Score, r.Score, e.CI95))
	}
	return append(out, check("ms_public", earlier.Summary.MSPublic, rerun.Summary.MSPublic, earlier.Summary.MSCI95)), nil
}

func check(name string, earlier, rerun *float64, ci *[2]float64) Check {
	c := Check{Name: name, Earlier: earlier, Rerun: rerun, CI95: ci}
	switch {
	case earlier == nil || rerun == nil:
		if earlier != rerun {
			c.Verdict = NotComparable
		} else {
			c.Verdict = Reproduced // no headline, twice
		}
	case ci != nil && *rerun >= ci[0] && *rerun <= ci[1], ci == nil && *rerun == *earlier:
		c.Verdict = Reproduced
	default:
		c.Verdict = NonDeterminism
	}
	return c
}

// Print writes a line a check (its name, both headlines, the earlier
// run's CI, the verdict), as `glossobench reproduce` prints them, and
// returns a phrase for each check that did not reproduce, for the note.
func Print(w io.Writer, checks []Check) (drift []string) {
	for _, c := range checks {
		ci := "no CI"
		if c.CI95 != nil {
			ci = fmt.Sprintf("CI [%.4f, %.4f]", c.CI95[0], c.CI95[1])
		}
		fmt.Fprintf(w, "%-10s earlier %s  rerun %s  %s  %s\n", c.Name, runfiles.FormatScore(c.Earlier), runfiles.FormatScore(c.Rerun), ci, c.Verdict)
		if c.Verdict != Reproduced {
			drift = append(drift, fmt.Sprintf("%s %s (earlier %s, %s): %s", c.Name, runfiles.FormatScore(c.Rerun), runfiles.FormatScore(c.Earlier), ci, c.Verdict))
		}
	}
	return drift
}
