package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/infra/runfiles"
)

// A walkthrough is a docs/ page a reader follows step by step: the files
// it shows (fenced blocks whose info string says file=PATH), the edits it
// asks for (edit=PATH: the block's lines go into PATH's import block) and
// the commands it runs (the lines of sh blocks), in the page's order.
type walkthrough struct {
	files    []block
	edits    []block
	commands []string
}

type block struct{ path, text string }

var fenceInfo = regexp.MustCompile("^```(\\S*)(.*)$")

func readWalkthrough(t *testing.T, page string) walkthrough {
	t.Helper()
	var w walkthrough
	lines := strings.Split(readFile(t, page), "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceInfo.FindStringSubmatch(lines[i])
		if m == nil || m[1] == "" {
			continue
		}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		text := strings.Join(body, "\n") + "\n"
		attr := strings.TrimSpace(m[2])
		switch {
		case strings.HasPrefix(attr, "file="):
			w.files = append(w.files, block{strings.TrimPrefix(attr, "file="), text})
		case strings.HasPrefix(attr, "edit="):
			w.edits = append(w.edits, block{strings.TrimPrefix(attr, "edit="), text})
		case m[1] == "sh":
			for _, l := range body {
				if l = strings.TrimSpace(l); l != "" {
					w.commands = append(w.commands, l)
				}
			}
		}
	}
	if len(w.files) == 0 || len(w.commands) == 0 {
		t.Fatalf("%s shows no file=PATH block or no sh commands", page)
	}
	return w
}

// write writes the walkthrough's files under dir and makes its edits
// there: each edit's lines go right after the file's `import (` line.
func (w walkthrough) write(t *testing.T, dir string) {
	t.Helper()
	for _, f := range w.files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range w.edits {
		p := filepath.Join(dir, filepath.FromSlash(e.path))
		src := readFile(t, p)
		i := strings.Index(src, "import (\n")
		if i < 0 {
			t.Fatalf("the walkthrough edits %s's import block, which it lacks", e.path)
		}
		i += len("import (\n")
		if err := os.WriteFile(p, []byte(src[:i]+e.text+src[i:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rows counts the lines of a walkthrough's JSONL file.
func (w walkthrough) rows(t *testing.T, path string) int {
	t.Helper()
	for _, f := range w.files {
		if f.path == path {
			return strings.Count(f.text, "\n")
		}
	}
	t.Fatalf("the walkthrough shows no file %s", path)
	return 0
}

// resultOf reads the result.json whose path `run` printed (relative to dir
// when not absolute).
func resultOf(t *testing.T, dir, out string) runfiles.Result {
	t.Helper()
	p := resultPath(t, out)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	var r runfiles.Result
	readJSON(t, p, &r)
	return r
}

const goRun = "go run ./cmd/glossobench "

// TestWalkthroughAddADataset follows docs/ADD_A_DATASET.md: its files in a
// fresh folder beside the repository's testdata/, its commands run from
// there as written (this program's main for `go run ./cmd/glossobench`),
// and the run scores every row of the new dataset.
func TestWalkthroughAddADataset(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the walkthrough's evaluation")
	}
	srv := testCluster(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	w := readWalkthrough(t, filepath.Join(root, "docs", "ADD_A_DATASET.md"))
	wd := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(wd, "testdata")); err != nil {
		t.Fatal(err)
	}
	w.write(t, wd)
	t.Chdir(wd)
	ran := false
	for _, cmd := range w.commands {
		args, ok := strings.CutPrefix(cmd, goRun)
		if !ok {
			t.Fatalf("docs/ADD_A_DATASET.md runs %q; this test runs only %q commands", cmd, goRun)
		}
		words := strings.Fields(args)
		var code int
		var out string
		if words[0] == "run" {
			code, out = runWithWorker(t, srv, words[1:]...)
		} else {
			code, out = captured(t, func() int { return mainCode(words) })
		}
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", cmd, code, out)
		}
		switch words[0] {
		case "check":
			if !strings.Contains(out, ": ready: ") {
				t.Errorf("%s does not end ready:\n%s", cmd, out)
			}
		case "run":
			ran = true
			r := resultOf(t, wd, out)
			if ax := r.Axes["knowledge"]; ax.Score == nil || ax.N != w.rows(t, "mydata/kuiz.jsonl") {
				t.Errorf("%s: knowledge scored %d items (score %v), want every row of mydata/kuiz.jsonl", cmd, ax.N, ax.Score)
			}
		}
	}
	if !ran {
		t.Error("docs/ADD_A_DATASET.md never runs the dataset")
	}
}

// TestWalkthroughAddAnAxis follows docs/ADD_AN_AXIS.md in a copy of the
// repository's tracked files: its files written and its edit made there,
// its go commands run there as written, the glossobench commands by the
// copy's own binary (`run` against this package's test server, with a
// worker of that binary), and the run scores the new axis.
func TestWalkthroughAddAnAxis(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program with a new axis")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	w := readWalkthrough(t, filepath.Join(root, "docs", "ADD_AN_AXIS.md"))
	clone := cloneTree(t, root)
	w.write(t, clone)
	goCmd := func(args ...string) string {
		t.Helper()
		c := exec.Command("go", args...)
		c.Dir = clone
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	bin := filepath.Join(t.TempDir(), "glossobench")
	built := false
	srv := testCluster(t) // TEMPORAL_ADDRESS for the copy's worker and run
	ran := false
	for _, cmd := range w.commands {
		words := strings.Fields(cmd)
		args, isCLI := strings.CutPrefix(cmd, goRun)
		if !isCLI {
			if words[0] != "go" {
				t.Fatalf("docs/ADD_AN_AXIS.md runs %q; this test runs only go commands", cmd)
			}
			goCmd(words[1:]...)
			continue
		}
		if !built {
			goCmd("build", "-o", bin, "./cmd/glossobench")
			built = true
		}
		words = strings.Fields(args)
		workerLog := filepath.Join(t.TempDir(), "worker.log")
		if words[0] == "run" {
			f, err := os.Create(workerLog)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			worker := exec.Command(bin, "worker")
			worker.Dir = clone
			worker.Stdout, worker.Stderr = f, f
			if err := worker.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { worker.Process.Kill(); worker.Wait() }()
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, bin, words...)
		c.Dir = clone
		out, err := c.CombinedOutput()
		if err != nil {
			log, _ := os.ReadFile(workerLog)
			t.Fatalf("%s (server %s): %v\n%s\nthe worker's log:\n%s", cmd, srv.Address, err, out, log)
		}
		if words[0] == "run" {
			ran = true
			r := resultOf(t, clone, string(out))
			if ax := r.Axes["reasoning"]; ax.Score == nil || ax.N != w.rows(t, "mydata/logik.jsonl") {
				t.Errorf("%s: reasoning scored %d items (score %v), want every row of mydata/logik.jsonl\n%s", cmd, ax.N, ax.Score, out)
			}
		}
	}
	if !ran {
		t.Error("docs/ADD_AN_AXIS.md never runs the new axis")
	}
}
