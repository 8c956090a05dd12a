// Package pagetest holds what the tests of the pages made from finished runs
// (the HTML report, the viewer) share: rendering a page in headless
// Chromium and checking the numbers a page shows against result.json.
package pagetest

import (
	"bytes"
	"context"
	"html"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium is Debian's headless browser (apt-get install -y chromium).
const chromium = "/usr/bin/chromium"

// DumpDOM loads url in headless Chromium, with no network of its own, and
// returns the DOM it built; without Chromium the test is skipped.
func DumpDOM(t *testing.T, url string) string {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("no /usr/bin/chromium (apt-get install -y chromium)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--dump-dom", url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
	}
	return string(out)
}

// Lookup follows a dotted path (array indexes as numbers) into v, a
// decoded JSON value.
func Lookup(v any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// cellRE is a number cell: data-field names its result.json path and
// data-value holds the exact number shown rounded in the text.
var cellRE = regexp.MustCompile(`<(?:td|span|b)(?: class="num")? data-field="([^"]+)"(?: data-value="([^"]*)")?>([^<]*)</(?:td|span|b)>`)

// CheckNumbers checks every number cell of doc against res, result.json
// decoded: the exact value equals result.json's and the text is it rounded
// to 4 places (a count, field ".n", whole). It returns the fields seen.
func CheckNumbers(t *testing.T, doc string, res map[string]any) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range cellRE.FindAllStringSubmatch(doc, -1) {
		field, exact, text := m[1], m[2], html.UnescapeString(m[3])
		seen[field] = true
		want, ok := Lookup(res, field)
		if exact == "" {
			if _, isNum := want.(float64); ok && isNum {
				t.Errorf("%s: page shows %q without a value, result.json has %v", field, text, want)
			}
			continue
		}
		got, err := strconv.ParseFloat(exact, 64)
		if err != nil {
			t.Errorf("%s: data-value %q: %v", field, exact, err)
			continue
		}
		w, isNum := want.(float64)
		if !ok || !isNum || w != got {
			t.Errorf("%s: page value %v, result.json %v", field, got, want)
			continue
		}
		shown := strconv.FormatFloat(w, 'f', 4, 64)
		if strings.HasSuffix(field, ".n") {
			shown = strconv.Itoa(int(w))
		}
		if text != shown {
			t.Errorf("%s: page shows %q, want %q", field, text, shown)
		}
	}
	return seen
}
