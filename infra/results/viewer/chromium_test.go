package viewer

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/internal/pagetest"
)

// TestViewInChromium: the pages Chromium builds from the viewer show
// result.json's numbers, a filtered page of a 100,000-item axis shows the
// items the filter keeps, the planted <script> in model output is text and
// never runs, and nothing is loaded from elsewhere.
func TestViewInChromium(t *testing.T) {
	dir := fakeStore(t, 100_000)
	srv := serve(t, dir)
	res := resultJSON(t, dir)

	list := pagetest.DumpDOM(t, srv.URL+"/")
	if !strings.Contains(list, `data-run="fake-run"`) || !pagetest.CheckNumbers(t, list, res)["summary.ms_public"] {
		t.Errorf("runs page did not render the run:\n%.2000s", list)
	}
	run := pagetest.DumpDOM(t, srv.URL+"/run/fake-run/")
	seen := pagetest.CheckNumbers(t, run, res)
	for name := range res["axes"].(map[string]any) {
		if !seen["axes."+name+".score"] || !seen["axes."+name+".ci95.0"] {
			t.Errorf("run page in Chromium lacks axis %s", name)
		}
	}

	first := pagetest.DumpDOM(t, srv.URL+"/run/fake-run/axis/big/")
	if got := pageIDs(first); len(got) != PageSize || got[0] != "dsa/0" {
		t.Errorf("first page of the big axis: %d items, first %v", len(got), got[:min(1, len(got))])
	}
	if regexp.MustCompile(`<html[^>]*data-pwned`).MatchString(first) {
		t.Error("the planted script ran")
	}
	// A serialised DOM escapes only &, < and > in text.
	asText := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(plantedOutput)
	if strings.Contains(foreignMarkup(first), "<script") || !strings.Contains(first, asText) {
		t.Error("the planted model output is not shown as text")
	}
	for _, doc := range []string{list, run, first} {
		if regexp.MustCompile(`(?:src|href)="(?:https?:)?//`).MatchString(doc) {
			t.Error("a page loads something from elsewhere")
		}
	}
	if !strings.Contains(first, `<link rel="stylesheet" href="/assets/style.css">`) {
		t.Error("the embedded stylesheet is not linked")
	}

	// The query the filter form submits (it is a GET form).
	doc := pagetest.DumpDOM(t, srv.URL+"/run/fake-run/axis/big/?dataset=dsb&outcome=correct&flag=truncated&q=&page=2")
	var want []string
	for i := 0; i < 100_000; i++ {
		if s, f := bigOutcome(i); bigDataset(i) == "dsb" && s == 1 && f == "truncated" {
			want = append(want, "dsb/"+itoa(i))
		}
	}
	if matched(t, doc) != len(want) || strings.Join(pageIDs(doc), ",") != strings.Join(want[PageSize:2*PageSize], ",") {
		t.Errorf("filtered page 2 in Chromium: %d matched, ids %v", matched(t, doc), pageIDs(doc))
	}
	if !regexp.MustCompile(`<option selected="">dsb</option>|<option selected>dsb</option>`).MatchString(doc) {
		t.Error("the filter form does not show the chosen dataset")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
