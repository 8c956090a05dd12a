package docs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pages are README.md and every Markdown page under docs/, relative to the
// repository root.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestREADMEIsShort: the README is the page a newcomer reads in five
// minutes; the reference lives in docs/.
func TestREADMEIsShort(t *testing.T) {
	if n := strings.Count(read(t, "README.md"), "\n"); n > 200 {
		t.Errorf("README.md has %d lines; keep it at most 200 and move reference text to docs/", n)
	}
}

// TestMethodologySections: docs/METHODOLOGY.md has the methodology's
// sections §0–§11 in order (what `grep -E '^## [0-9]+\.'` lists) and its
// Related footer names FAIREST.md, SPEC_v1.0.md, CRITIC_AUDIT.md and
// COMPARISON.md (TestRelativeLinksResolve checks that they resolve).
func TestMethodologySections(t *testing.T) {
	doc := read(t, "docs/METHODOLOGY.md")
	var got []int
	for _, m := range regexp.MustCompile(`(?m)^## ([0-9]+)\.`).FindAllStringSubmatch(doc, -1) {
		n, _ := strconv.Atoi(m[1])
		got = append(got, n)
	}
	want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	if !slices.Equal(got, want) {
		t.Errorf("docs/METHODOLOGY.md numbered sections %v, want %v in that order", got, want)
	}
	i := strings.LastIndex(doc, "**Related:**")
	if i < 0 {
		t.Fatal("docs/METHODOLOGY.md has no **Related:** footer")
	}
	footer := doc[i:]
	for _, page := range []string{"FAIREST.md", "SPEC_v1.0.md", "CRITIC_AUDIT.md", "COMPARISON.md"} {
		if !strings.Contains(footer, "]("+page+")") {
			t.Errorf("docs/METHODOLOGY.md's Related footer does not link %s", page)
		}
	}
}

var (
	link    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	fence   = regexp.MustCompile("^\\s*(```|~~~)")
	heading = regexp.MustCompile(`^#{1,6} +(.+?)\s*#*\s*$`)
)

// anchors are the #fragments a GitHub-rendered page offers: one per
// heading, lower-cased, punctuation dropped, spaces as hyphens, repeats
// numbered.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for line := range strings.Lines(doc) {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		m := heading.FindStringSubmatch(strings.TrimRight(line, "\n"))
		if inFence || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 127 && !strings.ContainsRune("§·–—“”‘’…", r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestRelativeLinksResolve: every relative link of README.md and docs/
// names a file or folder of the repository, and a #fragment names a
// heading of the page it points to.
func TestRelativeLinksResolve(t *testing.T) {
	for _, page := range pages(t) {
		doc := read(t, page)
		inFence := false
		sc := bufio.NewScanner(strings.NewReader(doc))
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if fence.MatchString(line) {
				inFence = !inFence
			}
			if inFence {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
					if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
						t.Errorf("%s:%d: link %s: %s does not exist", page, n, target, dest)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(dest, ".md") && !anchors(read(t, dest))[frag] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", page, n, target, dest, frag)
				}
			}
		}
	}
}

// TestFuzzTargetCount: docs/GUARANTEES.md states how many fuzz targets
// there are, in how many packages; the count is the repository's.
func TestFuzzTargetCount(t *testing.T) {
	fuzz := regexp.MustCompile(`(?m)^func Fuzz[A-Z0-9_]\w*\(`)
	targets, pkgs := 0, map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := len(fuzz.FindAll(b, -1)); n > 0 {
			targets += n
			pkgs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Fuzz targets \((\d+), in (\d+) packages`).FindStringSubmatch(read(t, "docs/GUARANTEES.md"))
	if m == nil {
		t.Fatal(`docs/GUARANTEES.md no longer says "Fuzz targets (N, in M packages"`)
	}
	if want := fmt.Sprintf("%d, in %d", targets, len(pkgs)); m[1]+", in "+m[2] != want {
		t.Errorf("docs/GUARANTEES.md says fuzz targets (%s, in %s packages); the repository has %s packages", m[1], m[2], want)
	}
}

// TestAnchorsAreGitHubs: the fragments TestRelativeLinksResolve accepts are
// those GitHub gives the headings, and only those.
func TestAnchorsAreGitHubs(t *testing.T) {
	got := anchors("# GlossoBench\n## 1. Axes\n```\n## not a heading\n```\n## result.json fields\n### Datasets as data, and peers' formats\n## Notes\n## Notes\n")
	for _, want := range []string{"glossobench", "1-axes", "resultjson-fields", "datasets-as-data-and-peers-formats", "notes", "notes-1"} {
		if !got[want] {
			t.Errorf("no anchor #%s in %v", want, got)
		}
	}
	if got["not-a-heading"] || len(got) != 6 {
		t.Errorf("anchors %v, want exactly the six headings outside the fence", got)
	}
}
