package chrf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPyRoundedPrintsAsPythonJSON: json.dumps(float(f"{x:.{w}f}")) keeps a
// ".0" on whole numbers and rounds half to even on the binary value.
func TestPyRoundedPrintsAsPythonJSON(t *testing.T) {
	for _, c := range []struct {
		x     float64
		width int
		want  string
	}{{54.2999, 1, "54.3"}, {100, 1, "100.0"}, {7.25, 1, "7.2"}, {1e-7, 3, "0.0"}, {61.01472605, 4, "61.0147"}} {
		if got := pyRounded(c.x, c.width); got != c.want {
			t.Errorf("pyRounded(%v, %d) = %s, want %s", c.x, c.width, got, c.want)
		}
	}
}

// TestJSONLayout is sacrebleu's -f json layout: one-space indent, the
// signature's fields as strings, sentences last.
func TestJSONLayout(t *testing.T) {
	s := Score{Name: "chrF2++", Score: 54.25, Signature: "nrefs:1|case:mixed|nc:6"}
	got := string(JSON(s, []Score{{Score: 50}, {Score: 58.49}}, 1))
	want := "{\n \"name\": \"chrF2++\",\n \"score\": 54.2,\n \"signature\": \"nrefs:1|case:mixed|nc:6\",\n \"nrefs\": \"1\",\n \"case\": \"mixed\",\n \"nc\": \"6\",\n \"sentences\": [\n  50.0,\n  58.5\n ]\n}\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestReadFilesRefusesWhatSacrebleuRefuses: line counts must match and
// every line needs a non-empty reference; trailing whitespace is stripped.
func TestReadFilesRefusesWhatSacrebleuRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	hyp := write("hyp", "a b \nc\x1f\n")
	hyps, streams, err := ReadFiles(hyp, []string{write("ref", "a\nd\n")})
	if err != nil || strings.Join(hyps, "|") != "a b|c" || len(streams) != 1 {
		t.Errorf("read %q %q %v", hyps, streams, err)
	}
	if _, _, err := ReadFiles(hyp, []string{write("short", "a\n")}); err == nil || !strings.Contains(err.Error(), "line count mismatch") {
		t.Errorf("short reference: %v", err)
	}
	if _, _, err := ReadFiles(hyp, []string{write("empty", "a\n\n")}); err == nil || !strings.Contains(err.Error(), "line 2: empty reference") {
		t.Errorf("empty reference: %v", err)
	}
}
