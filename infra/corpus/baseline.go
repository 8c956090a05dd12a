package corpus

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/glossobench/glossobench/internal/rss"
	"github.com/glossobench/glossobench/scorers/checks/dedup"
)

// The screen's speed beside GNU grep, ripgrep and cat on the same corpus
// (glossobench dedup --bench).

// Bench times the screen of p and its baselines on the same files, writing
// a table to w (tools' own errors to errw): cat (twice: the first warms
// the page cache), the screen with one worker and with p.Workers, GNU grep
// -F and ripgrep -F when on PATH (each with the time building its matcher
// takes), how many items each found (of planted, when given) and the peak
// RSS. CPU MB/s (bytes per CPU-second) is the per-core figure, meaningful
// on a busy machine where wall-clock rates are not. A corpus with a
// compressed file is refused with a *CompressedError.
func (p *Prepared) Bench(ctx context.Context, w, errw io.Writer, planted Planted) error {
	var paths []string
	for _, s := range p.Sources {
		if s.Compression != "" {
			return &CompressedError{URI: s.URI}
		}
		paths = append(paths, s.URI)
	}
	mb := float64(p.Stored) / 1e6
	fmt.Fprintf(w, "corpus: %d files, %.1f MB; index: %d items built in %s; GOMAXPROCS %d\n\n", len(p.Sources), mb, p.Index.Len(), p.IndexTime.Round(time.Millisecond), runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "%-58s %10s %10s %10s\n", "", "wall s", "wall MB/s", "CPU MB/s")
	row := func(name string, wall, cpu time.Duration) {
		fmt.Fprintf(w, "%-58s %10.2f %10.0f %10.0f\n", name, wall.Seconds(), mb/wall.Seconds(), mb/cpu.Seconds())
	}
	run := func(name string, argv ...string) {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdout = nil // /dev/null: cat has no early exit, so it reads every byte
		cmd.Stderr = errw
		t := time.Now()
		err := cmd.Run()
		wall := time.Since(t)
		if cmd.ProcessState == nil || err != nil {
			fmt.Fprintf(errw, "%s: %v\n", argv[0], err)
			return
		}
		row(name, wall, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	// cat first: it also warms the page cache for the others.
	run("cat CORPUS > /dev/null (warm-up)", append([]string{"cat"}, paths...)...)
	run("cat CORPUS > /dev/null", append([]string{"cat"}, paths...)...)
	matches, err := p.benchScreen(ctx, row)
	if err != nil {
		return err
	}
	found, err := p.benchGreps(ctx, w, errw, row, paths, planted)
	if err != nil {
		return err
	}
	found = slices.Insert(found, 0, fmt.Sprintf("glossobench dedup: %d items matched%s", len(matches), planted.Found(func(id string) bool {
		_, ok := slices.BinarySearchFunc(matches, id, func(m dedup.Match, id string) int { return strings.Compare(m.ItemID, id) })
		return ok
	})))
	fmt.Fprintln(w)
	for _, f := range found {
		fmt.Fprintln(w, f)
	}
	peak, err := rss.Peak(0)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "peak RSS of glossobench dedup --bench: %d MB\n", peak>>20)
	return nil
}

// benchScreen times the screen with one worker, then with p.Workers: each
// run gets its own shard plan, cut so that every worker has several shards
// to take. Both must match the same items.
func (p *Prepared) benchScreen(ctx context.Context, row func(string, time.Duration, time.Duration)) ([]dedup.Match, error) {
	counts := []int{1}
	if p.Workers > 1 {
		counts = append(counts, p.Workers)
	}
	var matches []dedup.Match
	for _, w := range counts {
		shards := Plan(p.Sources, BalancedShardBytes(p.Sources, p.ShardBytes, w))
		t, c := time.Now(), CPUTime()
		ms, _, _, err := Scanner{Index: p.Index}.ScanAll(ctx, shards, w)
		if err != nil {
			return nil, err
		}
		row(fmt.Sprintf("glossobench dedup, exact+Jaccard (%d worker(s), %d shards)", w, len(shards)), time.Since(t), CPUTime()-c)
		if matches != nil && !slices.Equal(matchIDs(ms), matchIDs(matches)) {
			return nil, fmt.Errorf("%d workers matched %d items, 1 worker %d", w, len(ms), len(matches))
		}
		matches = ms
	}
	return matches, nil
}

// benchGreps times grep -F and ripgrep -F over paths with the items'
// prompts as patterns and returns a line each on what it found.
func (p *Prepared) benchGreps(ctx context.Context, w, errw io.Writer, row func(string, time.Duration, time.Duration), paths []string, planted Planted) ([]string, error) {
	pat, err := os.CreateTemp("", "glossobench-dedup-patterns-*.txt")
	if err != nil {
		return nil, err
	}
	defer os.Remove(pat.Name())
	needle := map[string]string{} // item id -> its pattern line
	for _, it := range p.Items {
		needle[it.ID] = strings.Join(strings.Fields(it.Prompt), " ")
		fmt.Fprintln(pat, needle[it.ID])
	}
	pat.Close()
	var found []string
	for _, e := range []struct{ name, bin, deb string }{{"grep", "grep", "grep"}, {"ripgrep", "rg", "ripgrep"}} {
		if _, err := exec.LookPath(e.bin); err != nil {
			found = append(found, fmt.Sprintf("%s: not on PATH, not measured (Debian: apt-get install %s)", e.bin, e.deb))
			continue
		}
		g, err := grepCount(ctx, errw, e.bin, pat.Name(), paths)
		if err != nil {
			return nil, err
		}
		argv := grepArgs(e.bin, "-c", pat.Name())
		row(fmt.Sprintf("%s ... | read (exact only, %d patterns)", strings.Join(argv[:len(argv)-1], " "), len(p.Items)), g.wall, g.cpu)
		// Building the matcher for many patterns can be much of the
		// time; an empty input shows how much.
		if e, err := grepCount(ctx, errw, e.bin, pat.Name(), []string{os.DevNull}); err == nil {
			fmt.Fprintf(w, "%-58s %10.2f %10s %10s   (CPU %.2f s)\n", "  of which building the matcher (empty input)", e.wall.Seconds(), "", "", e.cpu.Seconds())
		}
		line := fmt.Sprintf("%s: %d matching lines (case kept, whitespace as in the items: %s does no normalisation)", e.name, g.lines, e.bin)
		if planted != nil {
			// Which needles occur: an untimed -o run.
			hits, err := grepFound(ctx, errw, e.bin, pat.Name(), paths)
			if err != nil {
				return nil, err
			}
			line += planted.Found(func(id string) bool { return hits[needle[id]] })
		}
		found = append(found, line)
	}
	return found, nil
}

// CompressedError is a corpus file Bench cannot time: grep and cat read
// plain files only.
type CompressedError struct{ URI string }

func (e *CompressedError) Error() string {
	return e.URI + " is compressed; grep and cat need plain files"
}

func matchIDs(ms []dedup.Match) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ItemID
	}
	return ids
}

// CPUTime is this process's user+system CPU time so far. The machine is
// shared, so wall-clock MB/s understates the engine; MB per CPU-second is
// the per-core figure.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// grepRun is one timed grep over a corpus.
type grepRun struct {
	lines     int // matching lines, summed over the files
	wall, cpu time.Duration
}

// grepArgs is the command line of grep or rg (bin) with one mode flag
// (-c or -o), fixed strings from patterns, one thread, no file names.
func grepArgs(bin, mode, patterns string) []string {
	argv := []string{bin, "-F", mode, "-h", "-f", patterns}
	if bin == "rg" {
		argv = []string{bin, "-j1", "-F", mode, "--no-filename", "-f", patterns}
	}
	return argv
}

// grepCount times grep -F -c (or rg's) over the corpus with its output read
// through a pipe. GNU grep given /dev/null as its output stops at the first
// match (it knows nothing will be printed), which would time a grep that
// read almost nothing; a pipe makes it count, so read, every line.
func grepCount(ctx context.Context, errw io.Writer, bin, patterns string, paths []string) (grepRun, error) {
	var out bytes.Buffer
	argv := append(grepArgs(bin, "-c", patterns), paths...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout = &out
	cmd.Stderr = errw
	t := time.Now()
	err := cmd.Run()
	wall := time.Since(t)
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) { // exit 1: no match
		return grepRun{}, fmt.Errorf("%s: %v", bin, err)
	}
	r := grepRun{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	for _, f := range strings.Fields(out.String()) { // one count per file
		n, err := strconv.Atoi(f)
		if err != nil {
			return grepRun{}, fmt.Errorf("%s -c printed %q", bin, out.String())
		}
		r.lines += n
	}
	return r, nil
}

// grepFound returns the patterns grep -F -o (or rg's) finds in the corpus.
// A pattern found only inside a longer one that matched at the same place
// is missed, which can only lower grep's count.
func grepFound(ctx context.Context, errw io.Writer, bin, patterns string, paths []string) (map[string]bool, error) {
	argv := append(grepArgs(bin, "-o", patterns), paths...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = errw
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
		return nil, fmt.Errorf("%s: %v", bin, err)
	}
	hits := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		hits[l] = true
	}
	return hits, nil
}

// Planted are the items a benchmark corpus holds copies of, by id,
// with how each was planted (verbatim, joined, recased, oneword).
type Planted map[string]string

// ReadPlanted reads id<TAB>how lines (testdata/dedup/gen writes them); "" gives nil.
func ReadPlanted(path string) (Planted, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := Planted{}
	for n, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		id, how, ok := strings.Cut(l, "\t")
		if !ok || id == "" {
			return nil, fmt.Errorf("%s:%d: want id<TAB>how, got %q", path, n+1, l)
		}
		p[id] = how
	}
	return p, nil
}

// Found says how many planted items has reports found, in all and by how
// they were planted: "; planted found 80 of 80 (joined 20/20, ...)".
func (p Planted) Found(has func(id string) bool) string {
	if p == nil {
		return ""
	}
	total, hit := map[string]int{}, map[string]int{}
	n := 0
	for id, how := range p {
		total[how]++
		if has(id) {
			hit[how]++
			n++
		}
	}
	var parts []string
	for _, how := range slices.Sorted(maps.Keys(total)) {
		parts = append(parts, fmt.Sprintf("%s %d/%d", how, hit[how], total[how]))
	}
	return fmt.Sprintf("; planted items found: %d of %d (%s)", n, len(p), strings.Join(parts, ", "))
}
