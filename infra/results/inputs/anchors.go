package inputs

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Difficulties are the expected difficulties, in the order accuracy should
// fall.
var Difficulties = []string{"easy", "medium", "hard"}

// Band is an accuracy range [Lo, Hi].
type Band struct{ Lo, Hi float64 }

func (b Band) String() string { return fmt.Sprintf("%g-%g", b.Lo, b.Hi) }

// Anchor is one row of an anchors file.
type Anchor struct {
	ItemID     string
	Difficulty string
	Band       *Band // nil when the row gives none
	Line       int
}

// AnchorSet is a parsed anchors file.
type AnchorSet struct {
	Anchors []Anchor
	Bands   map[string]Band // the expected band per difficulty, when given
	Blank   int             // rows without an expected_difficulty (an unfilled worksheet row)
}

// ReadAnchorsFile reads the anchors file at path (see ReadAnchors).
func ReadAnchorsFile(path string) (*AnchorSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAnchors(path, f)
}

// ReadAnchors reads an anchors CSV: item_id,expected_difficulty[,expected_accuracy]
// with or without a header. With a header the columns are found by name and
// others are ignored, so a filled-in spotcheck worksheet is an anchors file.
// expected_difficulty is easy, medium or hard; expected_accuracy is a band
// "lo-hi" of fractions (0.7-0.9) or percentages (70-90%). Rows with an empty
// difficulty are counted and skipped. Errors name the file, line and field;
// name is the file's name in them.
func ReadAnchors(name string, r io.Reader) (*AnchorSet, error) {
	set := &AnchorSet{Bands: map[string]Band{}}
	col := map[string]int{"item_id": 0, "expected_difficulty": 1, "expected_accuracy": 2}
	first := true
	seen := map[string]int{}
	bandLine := map[string]int{}
	err := eachRecord(name, r, func(rec []string, line int) error {
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
						return fmt.Errorf("%s:%d: header: column %q appears twice", name, line, h)
					}
					col[h] = j
				}
				if _, ok := col["expected_difficulty"]; !ok {
					return fmt.Errorf("%s:%d: header: no expected_difficulty column", name, line)
				}
				return nil
			}
		}
		get := func(field string) string {
			if i, ok := col[field]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		if !slices.ContainsFunc(rec, func(s string) bool { return s != "" }) {
			return nil
		}
		a := Anchor{ItemID: get("item_id"), Difficulty: strings.ToLower(get("expected_difficulty")), Line: line}
		if a.ItemID == "" {
			return fmt.Errorf("%s:%d: field item_id is empty", name, line)
		}
		if a.Difficulty == "" {
			set.Blank++
			return nil
		}
		if !slices.Contains(Difficulties, a.Difficulty) {
			return fmt.Errorf("%s:%d: field expected_difficulty: %q is not easy, medium or hard", name, line, get("expected_difficulty"))
		}
		if prev, dup := seen[a.ItemID]; dup {
			return fmt.Errorf("%s:%d: field item_id: %q already anchored on line %d", name, line, a.ItemID, prev)
		}
		seen[a.ItemID] = line
		if s := get("expected_accuracy"); s != "" {
			b, err := parseBand(s)
			if err != nil {
				return fmt.Errorf("%s:%d: field expected_accuracy: %v", name, line, err)
			}
			if old, ok := set.Bands[a.Difficulty]; ok && old != b {
				return fmt.Errorf("%s:%d: field expected_accuracy: %s band %v differs from %v on line %d", name, line, a.Difficulty, b, old, bandLine[a.Difficulty])
			}
			set.Bands[a.Difficulty], bandLine[a.Difficulty] = b, line
			a.Band = &b
		}
		set.Anchors = append(set.Anchors, a)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(set.Anchors) == 0 {
		return nil, fmt.Errorf("%s: no anchor with an expected_difficulty", name)
	}
	return set, nil
}

// parseBand reads "lo-hi" as fractions or, with a % sign, percentages.
func parseBand(s string) (Band, error) {
	t := strings.ReplaceAll(strings.ReplaceAll(s, " ", ""), "–", "-")
	pct := strings.HasSuffix(t, "%")
	t = strings.ReplaceAll(t, "%", "")
	lo, hi, ok := strings.Cut(t, "-")
	if !ok {
		return Band{}, fmt.Errorf("%q: want a band lo-hi, e.g. 0.7-0.9 or 70-90%%", s)
	}
	var b Band
	var err error
	if b.Lo, err = strconv.ParseFloat(lo, 64); err != nil {
		return Band{}, fmt.Errorf("%q: low end %q is not a number", s, lo)
	}
	if b.Hi, err = strconv.ParseFloat(hi, 64); err != nil {
		return Band{}, fmt.Errorf("%q: high end %q is not a number", s, hi)
	}
	if pct {
		b.Lo, b.Hi = b.Lo/100, b.Hi/100
	}
	if !(b.Lo >= 0 && b.Lo <= b.Hi && b.Hi <= 1) {
		return Band{}, fmt.Errorf("%q: want 0 <= lo <= hi <= %s", s, map[bool]string{true: "100%", false: "1"}[pct])
	}
	return b, nil
}
