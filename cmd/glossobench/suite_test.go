package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/devserver"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// shippedConfigs are the repository's own run configs, relative to its
// root: the quick start, every suite, and every config a README command
// names.
func shippedConfigs(t *testing.T, root string) []string {
	t.Helper()
	cfgs := []string{"testdata/quickstart.yaml"}
	suites, _ := filepath.Glob(filepath.Join(root, "testdata", "suites", "*.yaml"))
	for _, s := range suites {
		rel, _ := filepath.Rel(root, s)
		cfgs = append(cfgs, rel)
	}
	named := regexp.MustCompile(`--config[ =](\S+\.ya?ml)`)
	for _, readme := range []string{"README.md", "testdata/suites/README.md"} {
		for _, m := range named.FindAllStringSubmatch(readFile(t, filepath.Join(root, readme)), -1) {
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				t.Errorf("%s names --config %s, which is not in the repository", readme, m[1])
				continue
			}
			cfgs = append(cfgs, m[1])
		}
	}
	slices.Sort(cfgs)
	return slices.Compact(cfgs)
}

// requireAxesAccounted fails unless the result.json at path scores every
// axis of the config (a score over at least one item) or lists it as
// skipped with a reason, and records the limit.
func requireAxesAccounted(t *testing.T, path string, cfg *config.Config, limit int) {
	t.Helper()
	var r runfiles.Result
	readJSON(t, path, &r)
	for _, name := range cfg.AxisNames() {
		if ax, ok := r.Axes[name]; ok && ax.Score != nil && ax.N > 0 {
			continue
		}
		i := slices.IndexFunc(r.Summary.SkippedAxes, func(s runfiles.Skip) bool { return s.Axis == name })
		if i < 0 || r.Summary.SkippedAxes[i].Reason == "" {
			t.Errorf("%s: axis %s neither scored nor skipped with a reason: %+v", path, name, r.Axes[name].AxisResult)
			continue
		}
		t.Logf("%s: %s skipped: %s", path, name, r.Summary.SkippedAxes[i].Reason)
	}
	if r.Limit != limit {
		t.Errorf("%s: limit %d, want %d", path, r.Limit, limit)
	}
}

// resultPath is the result.json path `run` printed last.
func resultPath(t *testing.T, out string) string {
	t.Helper()
	i := strings.LastIndex(out, "result.json: ")
	if i < 0 {
		t.Fatalf("run printed no result.json path:\n%s", out)
	}
	return strings.TrimSpace(strings.SplitN(out[i+len("result.json: "):], "\n", 2)[0])
}

// TestShippedConfigsFromAnotherDirectory: every config the repository
// ships passes `check` and runs, from a working directory outside the
// repository, with --model naming a GGUF file relative to that directory.
// --model changes the model and nothing else: the configs' dataset paths
// (and the quick start's judge) still resolve against the config's folder.
func TestShippedConfigsFromAnotherDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every shipped config")
	}
	srv := testCluster(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfgs := shippedConfigs(t, root)
	wd := t.TempDir()
	model, err := os.ReadFile(filepath.Join(root, "testdata", "models", "tiny-llama", "tiny-llama.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wd, "tiny.gguf"), model, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	for _, cfg := range cfgs {
		t.Run(filepath.Base(cfg), func(t *testing.T) {
			path, _ := filepath.Rel(wd, filepath.Join(root, cfg)) // as a user in wd would write it
			c, err := config.Load(path, config.Overrides{Model: "gguf:tiny.gguf", ModelID: "shipped", Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			code, out := captured(t, func() int {
				return mainCode([]string{"check", "--config", path, "--model", "gguf:tiny.gguf", "--model-id", "shipped", "--limit", "2"})
			})
			if code != 0 || !strings.Contains(out, ": ready: ") {
				t.Fatalf("check: exit %d\n%s", code, out)
			}
			runID := "shipped-" + strings.TrimSuffix(filepath.Base(cfg), ".yaml")
			code, out = runWithWorker(t, srv, "--config", path, "--model", "gguf:tiny.gguf", "--model-id", "shipped", "--limit", "2", "--run-id", runID)
			if code != 0 {
				t.Fatalf("run: exit %d\n%s", code, out)
			}
			requireAxesAccounted(t, resultPath(t, out), c, 2)
		})
	}
}

// TestLimitBelowOneIsRefused: --limit 0 or -3 is refused with a sentence
// before anything is read.
func TestLimitBelowOneIsRefused(t *testing.T) {
	for _, cmd := range []string{"run", "check"} {
		for _, n := range []string{"0", "-3", "ten"} {
			code, out := captured(t, func() int {
				return mainCode([]string{cmd, "--config", "../../testdata/quickstart.yaml", "--limit", n})
			})
			want := `invalid value "` + n + `" for flag -limit: the rows read from every dataset must be a whole number of at least 1, got "` + n + `"`
			if code != 2 || !strings.Contains(out, want) {
				t.Errorf("%s --limit %s: exit %d, output\n%s\nwant %q", cmd, n, code, out, want)
			}
		}
	}
}

// readmeSuiteCommand is the README's command line that runs the Malay
// suite (continuation lines joined), as words.
func readmeSuiteCommand(t *testing.T, root string) []string {
	t.Helper()
	var cmd string
	lines := strings.Split(readFile(t, filepath.Join(root, "README.md")), "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "go run ./cmd/glossobench run ") || !strings.Contains(l, "testdata/suites/glossobench-v1-ms.yaml") {
			continue
		}
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
		}
		if cmd != "" {
			t.Fatalf("README.md has two suite commands:\n%s\n%s", cmd, l)
		}
		cmd = l
	}
	if cmd == "" {
		t.Fatal("README.md has no indented `go run ./cmd/glossobench run --config testdata/suites/glossobench-v1-ms.yaml ...` line")
	}
	return strings.Fields(cmd)
}

// cloneTree copies the files git tracks (as a clone would have them, with
// this checkout's edits) into a new folder and returns it.
func cloneTree(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files (the clone is made of the tracked files): %v", err)
	}
	dir := filepath.Join(t.TempDir(), "glossobench")
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src, err := os.Open(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in this checkout, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := os.Create(dst)
		if err == nil {
			_, err = io.Copy(w, src)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestREADMESuiteCommand is the production path in CI: the Malay suite
// against a served model. It runs the README's suite command word for word
// (its arguments to this program's main) in a copy of the repository's
// tracked files, against the llama-server .ci/run starts on the tiny model
// (GLOSSOBENCH_LLAMA_SERVER_URL), and then the same suite through
// `temporal workflow start` with model, model_id and limit in the workflow
// input (GLOSSOBENCH_TEMPORAL_CLI). Both must end with every axis of the
// suite scored or skipped with a reason (no judges: MT and Safety are
// skipped_no_judge).
func TestREADMESuiteCommand(t *testing.T) {
	url := os.Getenv("GLOSSOBENCH_LLAMA_SERVER_URL")
	if url == "" {
		t.Skip("GLOSSOBENCH_LLAMA_SERVER_URL (a llama-server on the tiny model) not set")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	words := readmeSuiteCommand(t, root)
	args := words[3:] // after "go run ./cmd/glossobench"
	i := slices.Index(args, "--model")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("the README's suite command names no --model: %s", strings.Join(words, " "))
	}
	if args[i+1] != url {
		t.Fatalf("the README's suite command runs against %s, but the llama-server under test (GLOSSOBENCH_LLAMA_SERVER_URL) is %s: README.md and .ci/run must name the same URL", args[i+1], url)
	}
	srv := testCluster(t)
	clone := cloneTree(t, root)
	t.Chdir(clone)
	cfgPath := filepath.Join(clone, "testdata", "suites", "glossobench-v1-ms.yaml")
	code, out := runWithWorker(t, srv, args[1:]...)
	t.Logf("%s\n%s", strings.Join(words, " "), out)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	ov := config.Overrides{Model: url}
	for j := 1; j+1 < len(args); j++ {
		switch args[j] {
		case "--model-id":
			ov.ModelID = args[j+1]
		case "--limit":
			if ov.Limit, err = strconv.Atoi(args[j+1]); err != nil {
				t.Fatalf("the README's suite command: --limit %s", args[j+1])
			}
		}
	}
	cfg, err := config.Load(cfgPath, ov)
	if err != nil {
		t.Fatal(err)
	}
	requireAxesAccounted(t, resultPath(t, out), cfg, ov.Limit)

	temporal := runnertest.TemporalCLI(t, srv) // skips the Temporal CLI half without the binary
	in := workflows.EvalRunInput{ConfigPath: cfgPath, Model: url, ModelID: ov.ModelID, Limit: ov.Limit, RunID: "suite-cli"}
	requireAxesAccounted(t, startWithTemporalCLI(t, temporal, srv, in), cfg, ov.Limit)
}

// startWithTemporalCLI starts EvalRun with `temporal workflow start` (the
// CLI temporal runs) beside a worker of this process, waits for it with
// `temporal workflow result` and returns its result.json path.
func startWithTemporalCLI(t *testing.T, temporal func(...string) []byte, srv *devserver.Server, in workflows.EvalRunInput) string {
	t.Helper()
	c, w, err := connectAndServe(srv.Address, srv.Namespace, newLogger(), runner.All)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer w.Stop()
	id := runnertest.StartWithCLI(temporal, in)
	var wrapped struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
	}
	res := temporal("workflow", "result", "--workflow-id", id, "--output", "json")
	if err := json.Unmarshal(res, &wrapped); err != nil || wrapped.Status != "COMPLETED" {
		t.Fatalf("temporal workflow result: %v\n%s", err, res)
	}
	var r workflows.EvalRunResult
	if err := json.Unmarshal(wrapped.Result, &r); err != nil {
		t.Fatal(err)
	}
	return r.Summary.ResultPath
}
