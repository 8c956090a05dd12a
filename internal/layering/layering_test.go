// Package layering checks the import rules of the module with go list, so
// that they stay true: activities is imported only by the workflows (the
// worker wiring, workflows/runner, among them), no import runs back up a
// layer, and products of finished runs read runs only through infra/runfiles.
package layering

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/glossobench/glossobench/"

// known are the imports that still break a rule, each with the issue's
// plan for it. The test fails when one of them disappears too, so the
// list only shrinks on purpose.
var known = map[string]string{}

// rule reports why the import from → to runs against the layering, or "".
func rule(from, to string) string {
	under := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	switch {
	case to == "activities" && !(under(from, "workflows") || under(from, "activities")):
		// activities/fakerun, which writes a run with the real stages for
		// other packages' tests, is the activities' own test helper.
		return "only the workflows (and the worker wiring beside them) import activities"
	case under(from, "activities") && under(to, "workflows"):
		return "activities run under the workflows, not above them"
	case under(from, "stats"):
		return "stats imports nothing of ours"
	case under(from, "backends") && !under(to, "backends"):
		return "backends import nothing of ours above them"
	case under(from, "scorers") && (under(to, "infra") || under(to, "activities") || under(to, "workflows")):
		return "scorers knows nothing of stores or Temporal"
	case under(from, "infra") && (under(to, "workflows") || to == "activities"):
		return "infra runs under the workflows, not above them"
	case under(from, "infra") && !under(from, "infra/results") && under(to, "infra/results"):
		return "plumbing knows nothing of what is made from finished runs"
	case under(from, "infra/results") && under(to, "infra/store") && from != "infra/results/leaderboard" && from != "infra/results/viewer":
		return "what is made from runs reads them through infra/runfiles"
	}
	return ""
}

func TestImportsKeepTheLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var found []string
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		from := strings.TrimPrefix(f[0], module)
		for _, imp := range f[1:] {
			to, ours := strings.CutPrefix(imp, module)
			if !ours {
				if strings.HasPrefix(imp, "go.temporal.io/") && strings.HasPrefix(from, "scorers") {
					t.Errorf("%s imports %s: scorers knows nothing of Temporal", from, imp)
				}
				continue
			}
			if why := rule(from, to); why != "" {
				edge := from + " -> " + to
				found = append(found, edge)
				if _, ok := known[edge]; !ok {
					t.Errorf("%s: %s", edge, why)
				}
			}
		}
	}
	for edge := range known {
		if !slices.Contains(found, edge) {
			t.Errorf("%s no longer happens: take it off the known list", edge)
		}
	}
}

func TestRuleCatchesAnImportUpALayer(t *testing.T) {
	for _, c := range [][2]string{{"infra/results/report", "activities"}, {"infra/runplan", "workflows/runner"}, {"infra/runplan", "workflows"}, {"activities", "workflows/runner"}, {"infra/runner", "infra/results/report"}, {"stats", "scorers"}, {"scorers/mcq", "infra/store"}, {"backends/openai", "scorers"}} {
		if rule(c[0], c[1]) == "" {
			t.Errorf("%s -> %s passes", c[0], c[1])
		}
	}
	for _, c := range [][2]string{{"workflows", "activities"}, {"workflows/runner", "activities"}, {"workflows/runner", "infra/devserver"}, {"infra/results/report", "infra/runfiles"}, {"scorers/mcq", "stats"}} {
		if why := rule(c[0], c[1]); why != "" {
			t.Errorf("%s -> %s refused: %s", c[0], c[1], why)
		}
	}
}
