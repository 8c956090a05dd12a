package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/glossobench/glossobench/infra/release"
)

func init() {
	register("calibrate", "accuracy per human-expected difficulty band and an easy→hard monotonicity verdict", runCalibrate)
}

func runCalibrate(args []string) int { return calibrateMain(args, os.Stdout, os.Stderr) }

// difficulties in the order accuracy should fall.
var difficulties = []string{"easy", "medium", "hard"}

// band is an accuracy range [Lo, Hi].
type band struct{ Lo, Hi float64 }

func (b band) String() string { return fmt.Sprintf("%g-%g", b.Lo, b.Hi) }

// anchor is one row of the anchors file.
type anchor struct {
	ItemID     string
	Difficulty string
	Band       *band // nil when the row gives none
	Line       int
}

// anchorSet is a parsed anchors file.
type anchorSet struct {
	Anchors []anchor
	Bands   map[string]band // the expected band per difficulty, when given
	Blank   int             // rows without an expected_difficulty (an unfilled worksheet row)
}

func readAnchorsFile(path string) (*anchorSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAnchors(path, f)
}

// readAnchors reads an anchors CSV: item_id,expected_difficulty[,expected_accuracy]
// with or without a header. With a header the columns are found by name and
// others are ignored, so a filled-in spotcheck worksheet is an anchors file.
// expected_difficulty is easy, medium or hard; expected_accuracy is a band
// "lo-hi" of fractions (0.7-0.9) or percentages (70-90%). Rows with an empty
// difficulty are counted and skipped. Errors name the file, line and field.
func readAnchors(name string, r io.Reader) (*anchorSet, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	set := &anchorSet{Bands: map[string]band{}}
	col := map[string]int{"item_id": 0, "expected_difficulty": 1, "expected_accuracy": 2}
	first := true
	seen := map[string]int{}
	bandLine := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0) // only after a successful Read: it panics on an empty record
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		if first {
			first = false
			if i := slices.IndexFunc(rec, func(s string) bool { return strings.EqualFold(strings.TrimPrefix(s, "\ufeff"), "item_id") }); i >= 0 {
				col = map[string]int{}
				for j, h := range rec {
					h = strings.ToLower(strings.TrimPrefix(h, "\ufeff"))
					if h == "expected_accuracy_band" {
						h = "expected_accuracy"
					}
					if _, dup := col[h]; dup && h != "" {
						return nil, fmt.Errorf("%s:%d: header: column %q appears twice", name, line, h)
					}
					col[h] = j
				}
				if _, ok := col["expected_difficulty"]; !ok {
					return nil, fmt.Errorf("%s:%d: header: no expected_difficulty column", name, line)
				}
				continue
			}
		}
		get := func(field string) string {
			if i, ok := col[field]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		if !slices.ContainsFunc(rec, func(s string) bool { return s != "" }) {
			continue
		}
		a := anchor{ItemID: get("item_id"), Difficulty: strings.ToLower(get("expected_difficulty")), Line: line}
		if a.ItemID == "" {
			return nil, fmt.Errorf("%s:%d: field item_id is empty", name, line)
		}
		if a.Difficulty == "" {
			set.Blank++
			continue
		}
		if !slices.Contains(difficulties, a.Difficulty) {
			return nil, fmt.Errorf("%s:%d: field expected_difficulty: %q is not easy, medium or hard", name, line, get("expected_difficulty"))
		}
		if prev, dup := seen[a.ItemID]; dup {
			return nil, fmt.Errorf("%s:%d: field item_id: %q already anchored on line %d", name, line, a.ItemID, prev)
		}
		seen[a.ItemID] = line
		if s := get("expected_accuracy"); s != "" {
			b, err := parseBand(s)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: field expected_accuracy: %v", name, line, err)
			}
			if old, ok := set.Bands[a.Difficulty]; ok && old != b {
				return nil, fmt.Errorf("%s:%d: field expected_accuracy: %s band %v differs from %v on line %d", name, line, a.Difficulty, b, old, bandLine[a.Difficulty])
			}
			set.Bands[a.Difficulty], bandLine[a.Difficulty] = b, line
			a.Band = &b
		}
		set.Anchors = append(set.Anchors, a)
	}
	if len(set.Anchors) == 0 {
		return nil, fmt.Errorf("%s: no anchor with an expected_difficulty", name)
	}
	return set, nil
}

// parseBand reads "lo-hi" as fractions or, with a % sign, percentages.
func parseBand(s string) (band, error) {
	t := strings.ReplaceAll(strings.ReplaceAll(s, " ", ""), "–", "-")
	pct := strings.HasSuffix(t, "%")
	t = strings.ReplaceAll(t, "%", "")
	lo, hi, ok := strings.Cut(t, "-")
	if !ok {
		return band{}, fmt.Errorf("%q: want a band lo-hi, e.g. 0.7-0.9 or 70-90%%", s)
	}
	var b band
	var err error
	if b.Lo, err = strconv.ParseFloat(lo, 64); err != nil {
		return band{}, fmt.Errorf("%q: low end %q is not a number", s, lo)
	}
	if b.Hi, err = strconv.ParseFloat(hi, 64); err != nil {
		return band{}, fmt.Errorf("%q: high end %q is not a number", s, hi)
	}
	if pct {
		b.Lo, b.Hi = b.Lo/100, b.Hi/100
	}
	if !(b.Lo >= 0 && b.Lo <= b.Hi && b.Hi <= 1) {
		return band{}, fmt.Errorf("%q: want 0 <= lo <= hi <= %s", s, map[bool]string{true: "100%", false: "1"}[pct])
	}
	return b, nil
}

// bandResult is the accuracy of one difficulty band.
type bandResult struct {
	Difficulty string   `json:"difficulty"`
	Anchors    int      `json:"anchors"`
	Scored     int      `json:"scored"`
	Accuracy   *float64 `json:"accuracy"`
	Expected   *band    `json:"expected,omitempty"`
	Verdict    string   `json:"verdict"` // within, below, above, no expectation, not scored
}

type calibration struct {
	Bands        []bandResult `json:"bands"`
	Monotonicity string       `json:"monotonicity"` // monotone, not monotone, undetermined
	Detail       string       `json:"detail"`
	Missing      []string     `json:"missing"` // anchored items the run did not score
}

// calibrate scores the anchors against the run's item scores (item id →
// score; an exact-match axis scores 1 or 0, so the mean is accuracy).
func calibrate(set *anchorSet, scores map[string]float64) calibration {
	var c calibration
	var accs []float64
	var names []string
	for _, d := range difficulties {
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
	set, err := readAnchorsFile(*anchorsPath)
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
