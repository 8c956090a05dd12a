package report_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/internal/pagetest"

	"github.com/rs/zerolog"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/activities/fakerun"
	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/results/report"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/audit"
	"github.com/glossobench/glossobench/scorers/mcq"
)

// render writes the fake run's report and returns it with result.json as
// both the typed and the generic value.
func render(t *testing.T) (string, *runfiles.Result, map[string]any) {
	t.Helper()
	storeDir := t.TempDir()
	dir, err := fakerun.WriteRun(storeDir, fakerun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := auditedResult(t, storeDir, filepath.Join(dir, "result.json"))
	var res runfiles.Result
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

func wantFields(res *runfiles.Result) []string {
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
	seen := pagetest.CheckNumbers(t, doc, generic)
	for _, f := range wantFields(res) {
		if !seen[f] {
			t.Errorf("page has no cell for %s", f)
		}
	}
	if n := checkAudits(t, doc, generic, seen); n < 4 {
		t.Errorf("%d audit charts checked; the pooled knowledge axis alone has three detectors and nlu a register pool", n)
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
	path, res, generic := render(t)
	dom := pagetest.DumpDOM(t, "file://"+path)
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
	seen := pagetest.CheckNumbers(t, dom, generic)
	for _, f := range wantFields(res) {
		if !seen[f] {
			t.Errorf("rendered page has no cell for %s", f)
		}
	}
	// Chromium rebuilt the page: the charts and the numbers and verdicts
	// printed beside them are still result.json's.
	if n := checkAudits(t, dom, generic, seen); n < 4 {
		t.Errorf("%d audit charts in the rendered page, want at least 4", n)
	}
	if !strings.Contains(dom, ">"+res.ModelID+"<") {
		t.Errorf("model id %s not on the page", res.ModelID)
	}
}

// auditedResult gives the fake run's axes real leakage audits from the
// EvalRun stage: nlu as the fake run left it (one dataset, so its
// confidence pooled by source is "not pooled", and three registers), knowledge as a pooled axis of 600 made-up items
// from three datasets with different yes-rates (so every detector runs). It
// returns result.json with them, rewritten in place.
func auditedResult(t *testing.T, storeDir, resultPath string) []byte {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(resultPath)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	var axes map[string]map[string]any
	if err := json.Unmarshal(res["axes"], &axes); err != nil {
		t.Fatal(err)
	}
	acts := activities.New(zerolog.Nop())
	nlu, err := acts.Audit(ctx, activities.AxisInput{RunRef: activities.RunRef{RunID: "fake-run", StoreURI: storeDir}, Axis: "nlu"})
	if err != nil {
		t.Fatal(err)
	}

	pooledDir := t.TempDir()
	st, err := store.Open(ctx, pooledDir)
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := json.Marshal(map[string]any{"config": config.Config{Run: config.Run{Seed: 1234}}})
	r := rand.New(rand.NewPCG(3, 600))
	var items, scores bytes.Buffer
	for i := range 600 {
		ds := []string{"ds-a", "ds-b", "ds-c"}[i%3]
		y := r.Float64() < []float64{0.85, 0.6, 0.3}[i%3]
		rating := 0.6 * r.Float64()
		if y {
			rating += 0.25
		}
		id := fmt.Sprintf("%s/%d", ds, i)
		json.NewEncoder(&items).Encode(scorers.Item{ID: id, Axis: "knowledge", Dataset: ds, Source: ds})
		reg := []string{"HIGH", "LOW"}[i%2]
		json.NewEncoder(&scores).Encode(scorers.ItemScore{ItemID: id, Source: ds, Rating: rating, Label: y,
			Audit: []scorers.AuditRow{{Detector: mcq.DetectorClozeConfidence, Rating: rating, Label: y, Tags: map[string]string{"source": ds, "register": reg}}}})
	}
	for key, b := range map[string][]byte{"runs/p/manifest.json": manifest, "runs/p/knowledge/items.jsonl": items.Bytes(), "runs/p/knowledge/scores.jsonl": scores.Bytes()} {
		if err := st.Put(ctx, key, b); err != nil {
			t.Fatal(err)
		}
	}
	know, err := acts.Audit(ctx, activities.AxisInput{RunRef: activities.RunRef{RunID: "p", StoreURI: pooledDir}, Axis: "knowledge"})
	if err != nil {
		t.Fatal(err)
	}
	if know.Headline == nil || len(know.Trained) == 0 || len(know.Pools) != 1 || len(nlu.Pools) != 1 || nlu.Pools[0].Verdict != audit.VerdictNotPooled {
		t.Fatalf("stage audits are not what the test needs: knowledge %+v, nlu %+v", know, nlu)
	}
	axes["knowledge"]["measurement_profile"].(map[string]any)["leakage"] = know
	axes["nlu"]["measurement_profile"].(map[string]any)["leakage"] = nlu
	if res["axes"], err = json.Marshal(axes); err != nil {
		t.Fatal(err)
	}
	if data, err = json.MarshalIndent(res, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(resultPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

// audits lists the result.json paths of every leakage audit summary: the
// axis's first pool, its trained detectors, and its further pools.
func audits(generic map[string]any) []string {
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		out = append(out, path)
		if tr, ok := m["trained"].([]any); ok {
			for i, x := range tr {
				walk(fmt.Sprintf("%s.trained.%d", path, i), x)
			}
		}
		if ps, ok := m["pools"].([]any); ok {
			for i, x := range ps {
				walk(fmt.Sprintf("%s.pools.%d", path, i), x)
			}
		}
	}
	axes, _ := generic["axes"].(map[string]any)
	for name := range axes {
		p := "axes." + name + ".measurement_profile.leakage"
		v, _ := pagetest.Lookup(generic, p)
		walk(p, v)
	}
	slices.Sort(out)
	return out
}

var chartRE = regexp.MustCompile(`<img class="audit-chart" data-audit="([^"]+)"[^>]* src="([^"]+)"`)

// checkAudits checks the leakage section of doc against result.json: every
// audit with three numbers has its chart, whose title and marks print the
// numbers and verdict of result.json, and a verdict cell that says the
// same; an axis that is not pooled says so. It returns how many charts it
// checked.
func checkAudits(t *testing.T, doc string, generic map[string]any, seen map[string]bool) int {
	t.Helper()
	charts := map[string]string{}
	for _, m := range chartRE.FindAllStringSubmatch(doc, -1) {
		b64, ok := strings.CutPrefix(html.UnescapeString(m[2]), "data:image/svg+xml;base64,")
		if !ok {
			t.Errorf("%s: chart is not an embedded SVG", m[1])
			continue
		}
		svg, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Errorf("%s: %v", m[1], err)
			continue
		}
		charts[m[1]] = html.UnescapeString(string(svg))
	}
	n := 0
	for _, path := range audits(generic) {
		v, _ := pagetest.Lookup(generic, path)
		sum := v.(map[string]any)
		verdict, _ := sum["verdict"].(string)
		if d, ok := sum["design"].(map[string]any); ok {
			// Every pool names its detector, label and source.
			want := fmt.Sprintf(`data-field="%s.design"><small>detector <code>%s</code>: %s · label <code>%s</code>: %s · source <code>%s</code>`,
				path, d["detector"], d["detector_is"], d["label"], d["label_is"], d["source"])
			// Compared as text: Go's templates write ' as &#39;, Chromium's
			// serialised DOM writes it as it is.
			if !strings.Contains(html.UnescapeString(doc), want) {
				t.Errorf("%s: the page does not name the pool's design: %s", path, want)
			}
		} else if !strings.Contains(path, ".trained.") {
			want := fmt.Sprintf(`<p class="audit-text" data-field="%s.verdict">%s</p>`, path, html.EscapeString(verdict))
			if !strings.Contains(doc, want) {
				t.Errorf("%s: no %q on the page", path, want)
			}
			continue
		}
		if verdict == audit.VerdictNotPooled {
			want := fmt.Sprintf(`<p class="audit-text" data-field="%s.verdict">not pooled</p>`, path)
			if !strings.Contains(doc, want) {
				t.Errorf("%s: no %q on the page", path, want)
			}
			continue
		}
		if !strings.Contains(doc, fmt.Sprintf(`data-field="%s.verdict">%s<`, path, html.EscapeString(verdict))) {
			t.Errorf("%s: the page does not print verdict %q", path, verdict)
		}
		h, ok := sum["headline"].(float64)
		if !ok {
			continue // not audited: the verdict gives the reason
		}
		for _, k := range []string{"headline", "measurements_only", "source_only", "l", "l_min"} {
			if !seen[path+"."+k] {
				t.Errorf("page has no cell for %s.%s", path, k)
			}
		}
		svg, ok := charts[path]
		if !ok {
			t.Errorf("%s: no chart", path)
			continue
		}
		n++
		l := sum["l"].(float64)
		for _, want := range []string{
			fmt.Sprintf("headline %.3f", h),
			fmt.Sprintf("measurements-only %.3f", sum["measurements_only"].(float64)),
			fmt.Sprintf("source-only %.3f", sum["source_only"].(float64)),
			fmt.Sprintf("%s: L %.2f", verdict, l),
			fmt.Sprintf("floor %.2f", sum["floor"].(float64)),
			fmt.Sprintf("band: source-only = %.2f × headline", sum["band"].(float64)),
		} {
			if !strings.Contains(svg, ">"+want) {
				t.Errorf("%s: chart does not print %q", path, want)
			}
		}
	}
	return n
}
