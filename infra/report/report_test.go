package report_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/release/releasetest"
	"github.com/glossobench/glossobench/infra/report"
)

// render writes the fake run's report and returns it with result.json as
// both the typed and the generic value.
func render(t *testing.T) (string, *activities.Result, map[string]any) {
	t.Helper()
	dir, err := releasetest.WriteRun(t.TempDir(), releasetest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res activities.Result
	var generic map[string]any
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &generic); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.Write(&b, &res); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, &res, generic
}

// lookup follows a dotted path (array indexes as numbers) into v.
func lookup(v any, path string) (any, bool) {
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

var cellRE = regexp.MustCompile(`<td class="num" data-field="([^"]+)"(?: data-value="([^"]*)")?>([^<]*)</td>`)

// checkNumbers checks every number cell of doc against result.json and
// returns the fields it saw.
func checkNumbers(t *testing.T, doc string, generic map[string]any) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range cellRE.FindAllStringSubmatch(doc, -1) {
		field, exact, text := m[1], m[2], html.UnescapeString(m[3])
		seen[field] = true
		want, ok := lookup(generic, field)
		if exact == "" {
			if ok && want != nil {
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

func wantFields(res *activities.Result) []string {
	f := []string{"summary.ms_public", "summary.ms_ci95.0", "summary.ms_ci95.1", "summary.ms_pooled", "summary.ms_experimental"}
	for name := range res.Axes {
		for _, k := range []string{"score", "ci95.0", "ci95.1", "weight", "measurement_profile.n", "measurement_profile.contamination_rate"} {
			f = append(f, "axes."+name+"."+k)
		}
	}
	return f
}

func TestReportNumbersMatchResult(t *testing.T) {
	path, res, generic := render(t)
	data, _ := os.ReadFile(path)
	doc := string(data)
	seen := checkNumbers(t, doc, generic)
	for _, f := range wantFields(res) {
		if !seen[f] {
			t.Errorf("page has no cell for %s", f)
		}
	}
	if strings.Contains(doc, "<script") {
		t.Error("the page contains a script element")
	}
	if !strings.Contains(doc, "&lt;script&gt;") {
		t.Error("the planted note is not shown escaped")
	}
	// The plot is a well-formed SVG embedded as a data URI.
	m := regexp.MustCompile(`<img id="plot"[^>]* src="([^"]+)"`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("no embedded plot")
	}
	b64, ok := strings.CutPrefix(html.UnescapeString(m[1]), "data:image/svg+xml;base64,")
	if !ok {
		t.Fatalf("plot source %.60q is not an embedded SVG", m[1])
	}
	svg, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("embedded SVG: %v", err)
		}
	}
	for name := range res.Axes {
		if !bytes.Contains(svg, []byte(">"+name+"<")) {
			t.Errorf("plot has no label for axis %s", name)
		}
	}
}

// TestReportInChromium renders the page in headless Chromium: the DOM it
// builds must hold every number of result.json, and the <script> planted in
// a note must be text, not run.
func TestReportInChromium(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("no /usr/bin/chromium (apt-get install -y chromium)")
	}
	path, res, generic := render(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--dump-dom", "file://"+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	dom := string(out)
	if !strings.Contains(dom, "<h1>GlossoBench report</h1>") || !strings.Contains(dom, `id="plot"`) {
		t.Fatalf("page did not render:\n%.2000s", dom)
	}
	if strings.Contains(dom, "data-pwned") && !strings.Contains(dom, "&lt;script&gt;document.documentElement.setAttribute(\"data-pwned\"") {
		t.Error("the planted script is in the DOM as markup")
	}
	if regexp.MustCompile(`<html[^>]*data-pwned`).MatchString(dom) {
		t.Error("the planted script ran")
	}
	if !strings.Contains(dom, `<li class="note">&lt;script&gt;document.documentElement.setAttribute("data-pwned","yes")&lt;/script&gt; planted note &amp; "quotes"</li>`) {
		t.Error("the planted note is not shown as text")
	}
	if strings.Count(dom, "<script") > 0 {
		t.Error("the DOM holds a script element")
	}
	seen := checkNumbers(t, dom, generic)
	for _, f := range wantFields(res) {
		if !seen[f] {
			t.Errorf("rendered page has no cell for %s", f)
		}
	}
	if !strings.Contains(dom, ">"+res.ModelID+"<") {
		t.Errorf("model id %s not on the page", res.ModelID)
	}
}
