package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/infra/results/release"
)

func init() {
	register("calibrate", "accuracy per human-expected difficulty band and an easy→hard monotonicity verdict", runCalibrate)
}

func runCalibrate(args []string) int { return calibrateMain(args, os.Stdout, os.Stderr) }

// bandResult is the accuracy of one difficulty band.
type bandResult struct {
	Difficulty string       `json:"difficulty"`
	Anchors    int          `json:"anchors"`
	Scored     int          `json:"scored"`
	Accuracy   *float64     `json:"accuracy"`
	Expected   *inputs.Band `json:"expected,omitempty"`
	Verdict    string       `json:"verdict"` // within, below, above, no expectation, not scored
}

type calibration struct {
	Bands        []bandResult `json:"bands"`
	Monotonicity string       `json:"monotonicity"` // monotone, not monotone, undetermined
	Detail       string       `json:"detail"`
	Missing      []string     `json:"missing"` // anchored items the run did not score
}

// calibrate scores the anchors against the run's item scores (item id →
// score; an exact-match axis scores 1 or 0, so the mean is accuracy).
func calibrate(set *inputs.AnchorSet, scores map[string]float64) calibration {
	var c calibration
	var accs []float64
	var names []string
	for _, d := range inputs.Difficulties {
		br := bandResult{Difficulty: d, Verdict: "not scored"}
		if b, ok := set.Bands[d]; ok {
			br.Expected = &b
		}
		var sum float64
		for _, a := range set.Anchors {
			if a.Difficulty != d {
				continue
			}
			br.Anchors++
			if s, ok := scores[a.ItemID]; ok {
				br.Scored++
				sum += s
			} else {
				c.Missing = append(c.Missing, a.ItemID)
			}
		}
		if br.Scored > 0 {
			acc := sum / float64(br.Scored)
			br.Accuracy = &acc
			accs, names = append(accs, acc), append(names, d)
			switch {
			case br.Expected == nil:
				br.Verdict = "no expectation"
			case acc < br.Expected.Lo:
				br.Verdict = "below"
			case acc > br.Expected.Hi:
				br.Verdict = "above"
			default:
				br.Verdict = "within"
			}
		}
		if br.Anchors > 0 {
			c.Bands = append(c.Bands, br)
		}
	}
	switch {
	case len(accs) < 2:
		c.Monotonicity, c.Detail = "undetermined", "fewer than two difficulty bands were scored"
	default:
		c.Monotonicity = "monotone"
		c.Detail = "accuracy does not rise from easy to hard"
		for i := 1; i < len(accs); i++ {
			if accs[i] > accs[i-1] {
				c.Monotonicity = "not monotone"
				c.Detail = fmt.Sprintf("%s accuracy %.4f is above %s accuracy %.4f", names[i], accs[i], names[i-1], accs[i-1])
				break
			}
		}
	}
	return c
}

func calibrateMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	anchorsPath := fs.String("anchors", "", "anchors CSV `FILE`: item_id,expected_difficulty[,expected_accuracy]")
	axis := fs.String("axis", "", "only this axis's items (when item ids repeat across axes)")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench calibrate RUNDIR --anchors FILE [--axis NAME] [--out FILE]")
		fmt.Fprintln(stderr, "\nThe anchors name items a fluent reader rated easy, medium or hard, optionally with the")
		fmt.Fprintln(stderr, "accuracy band expected of each (0.8-1.0 or 80-100%). A filled-in spotcheck worksheet")
		fmt.Fprintln(stderr, "works as is. Prints accuracy per band against the expected band and whether accuracy")
		fmt.Fprintln(stderr, "falls from easy to hard. Exit 0 when monotone (or undetermined), 2 when not, 1 on error.")
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(rest) != 1 || *anchorsPath == "" {
		fs.Usage()
		return 1
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "glossobench calibrate: %v\n", err)
		return 1
	}
	set, err := inputs.ReadAnchorsFile(*anchorsPath)
	if err != nil {
		return fail(err)
	}
	run, err := release.LoadRun(rest[0])
	if err != nil {
		return fail(err)
	}
	if *axis != "" {
		if _, ok := run.Axes[*axis]; !ok {
			return fail(fmt.Errorf("--axis %s: the run has no such axis", *axis))
		}
	}
	scores := map[string]float64{}
	where := map[string]string{}
	for _, name := range run.AxisNames() {
		if *axis != "" && name != *axis {
			continue
		}
		for _, s := range run.Axes[name].Scores {
			if prev, dup := where[s.ItemID]; dup {
				return fail(fmt.Errorf("item id %s is scored on axes %s and %s; choose one with --axis", s.ItemID, prev, name))
			}
			where[s.ItemID] = name
			scores[s.ItemID] = s.Score
		}
	}
	c := calibrate(set, scores)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "difficulty\tanchors\tscored\taccuracy\texpected\tverdict")
	for _, b := range c.Bands {
		exp := "-"
		if b.Expected != nil {
			exp = b.Expected.String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", b.Difficulty, b.Anchors, b.Scored, fmtOpt(b.Accuracy), exp, b.Verdict)
	}
	tw.Flush()
	if len(c.Missing) > 0 {
		fmt.Fprintf(stdout, "note: %d anchored item(s) not scored in this run (first: %s)\n", len(c.Missing), c.Missing[0])
	}
	if set.Blank > 0 {
		fmt.Fprintf(stdout, "note: %d row(s) without an expected_difficulty skipped\n", set.Blank)
	}
	fmt.Fprintf(stdout, "easy→hard: %s (%s)\n", c.Monotonicity, c.Detail)
	if *out != "" {
		if err := writeReportJSON(*out, c); err != nil {
			return fail(err)
		}
	}
	if c.Monotonicity == "not monotone" {
		return 2
	}
	return 0
}
