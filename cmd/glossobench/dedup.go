package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/glossobench/glossobench/infra/runplan"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/corpus"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/dedup"
)

func init() {
	register("dedup", "screen eval items against a training corpus (contamination hard-exclude)", runDedup)
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runDedup(args []string) int {
	fs := flag.NewFlagSet("dedup", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: glossobench dedup --items CONFIG.yaml|ITEMS.jsonl [--corpus PATH|s3://BUCKET/PREFIX/?... ...] [flags] [PATH ...]\n\n"+
			"Screens eval items against training-corpus files, globs, directories or S3 prefixes (text, lines or\n"+
			"JSONL; .gz and .zst read as compressed) and reports the items a run would drop, kept/dropped and the\n"+
			"task-level contamination rate per axis, the corpus fingerprints and the kept-id SHA-256.\n\n"+
			"--items is either a run config (YAML; .yaml/.yml, or any file not starting with '{'): the items of\n"+
			"every dataset it names are loaded exactly as a run's Prepare loads them, and the config's dedup\n"+
			"section supplies the corpus (unless --corpus is given) and the options (unless set by flags), so\n"+
			"the kept SHA-256 equals the one a run with that config publishes. Or a JSONL file of items\n"+
			"(.jsonl/.ndjson/.json, or content starting with '{'), at least {\"id\",\"prompt\"} per line.\n\n"+
			"S3 prefixes take the query parameters of an S3 store URI: endpoint, region, path_style,\n"+
			"access_key_env, secret_key_env (names of environment variables, never keys).\n\nflags:")
		fs.PrintDefaults()
	}
	var entries multiFlag
	itemsPath := fs.String("items", "", "run config (YAML) or eval items (JSONL) (required)")
	fs.Var(&entries, "corpus", "corpus file, glob, directory or s3:// prefix (repeatable; trailing arguments count too; default: the config's dedup.corpus)")
	format := fs.String("format", "", "corpus format: text (blank-line separated documents), lines or jsonl; default from the file name")
	textField := fs.String("text-field", corpus.DefaultTextField, "JSONL field holding the document text (default: the config's dedup.text_field, else text)")
	minLen := fs.Int("min-len", dedup.DefaultMinExactLen, "shortest prompt (characters) searched as a substring; shorter ones match whole documents/lines (default: the config's dedup.min_chars)")
	ngram := fs.Int("ngram", dedup.DefaultShingleN, "word n-gram size of the Jaccard shingles")
	jaccard := fs.Float64("jaccard", dedup.DefaultJaccard, "shingle Jaccard threshold (default: the config's dedup.jaccard)")
	noJaccard := fs.Bool("no-jaccard", false, "exact matching only")
	shardMB := fs.Int64("shard-mb", 256, "split uncompressed files into shards of at most this many MB (smaller when needed to give every worker several)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "shards screened in parallel")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	noHash := fs.Bool("no-fingerprint", false, "skip the SHA-256 of local corpus files (saves a second read; S3 objects are named by their ETag)")
	bench := fs.Bool("bench", false, "time the screen and print MB per CPU-second beside GNU grep (grep -F -c -f ITEMS CORPUS), ripgrep (rg -j1 -F -c -f ITEMS CORPUS, when on PATH) and cat CORPUS > /dev/null; grep's and rg's counts are read through a pipe, as GNU grep writing to /dev/null stops at the first match")
	planted := fs.String("planted", "", "with --bench: TSV of planted item ids (id<TAB>how, as testdata/dedup/gen writes); print how many of them each engine found")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	entries = append(entries, fs.Args()...)
	if *itemsPath == "" {
		fmt.Fprintln(os.Stderr, "glossobench dedup: --items is required")
		fs.Usage()
		return 2
	}
	fail := failer(os.Stderr, "dedup")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	opt := dedup.Options{MinExactLen: *minLen, ShingleN: *ngram, Jaccard: *jaccard, NoJaccard: *noJaccard}
	isConfig, err := looksLikeConfig(*itemsPath)
	if err != nil {
		return fail(err)
	}
	var items []scorers.Item
	if isConfig {
		cfg, err := config.Load(*itemsPath, config.Overrides{})
		if err != nil {
			return fail(err)
		}
		axes, skipped, err := runplan.LoadAxes(cfg, runplan.ModelMeta(cfg))
		if err != nil {
			return fail(fmt.Errorf("%s: %w", *itemsPath, err))
		}
		for _, ax := range axes {
			items = append(items, ax.Items...)
		}
		for _, s := range skipped {
			fmt.Fprintf(os.Stderr, "glossobench dedup: axis %s not screened, as a run would not score it: %s\n", s.Axis, s.Reason)
		}
		// The run's options, unless a flag says otherwise.
		runOpt := runplan.DedupOptions(cfg)
		if !set["min-len"] {
			opt.MinExactLen = runOpt.MinExactLen
		}
		if !set["jaccard"] {
			opt.Jaccard = runOpt.Jaccard
		}
		if !set["text-field"] && cfg.Dedup.TextField != "" {
			*textField = cfg.Dedup.TextField
		}
		if len(entries) == 0 {
			entries = cfg.Dedup.Corpus
		}
	} else if items, err = dedup.LoadItemsFile(*itemsPath); err != nil {
		return fail(err)
	}
	if len(entries) == 0 {
		fmt.Fprintln(os.Stderr, "glossobench dedup: no corpus: give --corpus (or a config with dedup.corpus)")
		fs.Usage()
		return 2
	}

	screen := corpus.Screen{Options: opt, Format: *format, TextField: *textField, ShardBytes: *shardMB << 20, Workers: *workers, NoFingerprint: *noHash}
	p, err := screen.Prepare(ctx, items, entries)
	if err != nil {
		return fail(err)
	}
	if *bench {
		return dedupBench(ctx, p, *planted)
	}
	res, err := p.Scan(ctx)
	if err != nil {
		return fail(err)
	}
	rep := res.Report
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fail(err)
		}
		return 0
	}
	printDedupReport(os.Stdout, rep, res.Shards, res.Docs, res.DocBytes, p.Stored, res.ScanTime)
	return 0
}

// looksLikeConfig tells a run config from an items JSONL: by extension
// (.yaml/.yml vs .jsonl/.ndjson/.json), else by content (JSONL starts with '{').
func looksLikeConfig(path string) (bool, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return true, nil
	case ".jsonl", ".ndjson", ".json":
		return false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(head[:n], []byte("\ufeff")), " \t\r\n")
	return len(trimmed) == 0 || trimmed[0] != '{', nil
}

func printDedupReport(w io.Writer, rep dedup.Report, shards int, docs, docBytes, stored int64, took time.Duration) {
	o := rep.Options
	fmt.Fprintf(w, "corpus: %d files, %.1f MB stored, %d documents, %.1f MB of text, %d shards, %s (%.0f MB/s)\n",
		len(rep.Corpus), float64(stored)/1e6, docs, float64(docBytes)/1e6, shards, took.Round(time.Millisecond), float64(stored)/1e6/took.Seconds())
	for _, f := range rep.Corpus {
		switch {
		case f.SHA256 != "":
			fmt.Fprintf(w, "  %s  %d bytes  sha256 %s\n", f.URI, f.Size, f.SHA256)
		case f.ETag != "":
			fmt.Fprintf(w, "  %s  %d bytes  etag %s\n", f.URI, f.Size, f.ETag)
		default:
			fmt.Fprintf(w, "  %s  %d bytes  sha256 (not computed)\n", f.URI, f.Size)
		}
	}
	jac := fmt.Sprintf("%d-gram Jaccard >= %g", o.ShingleN, o.Jaccard)
	if o.NoJaccard {
		jac = "no Jaccard"
	}
	fmt.Fprintf(w, "rules: exact substring for prompts >= %d chars (whole document/line below), %s\n", o.MinExactLen, jac)
	fmt.Fprintf(w, "items: %d, kept %d, dropped %d\nkept sha256: %s\n", rep.Items, rep.Kept, rep.Dropped, rep.KeptSHA256)
	fmt.Fprintf(w, "\n%-12s %7s %7s %7s %7s %13s %9s\n", "axis", "items", "kept", "dropped", "tasks", "contam.tasks", "rate")
	for _, a := range rep.Axes {
		name := a.Axis
		if name == "" {
			name = "-"
		}
		rate := "no corpus"
		if a.ContaminationRate != nil {
			rate = fmt.Sprintf("%.4f", *a.ContaminationRate)
		}
		fmt.Fprintf(w, "%-12s %7d %7d %7d %7d %13d %9s\n", name, a.Items, a.Kept, a.Dropped, a.Tasks, a.ContaminatedTasks, rate)
	}
	if len(rep.Drops) > 0 {
		fmt.Fprintln(w, "\ndropped:")
	}
	for _, d := range rep.Drops {
		how := fmt.Sprintf("%s at %s offset %d", d.Kind, d.Match.URI, d.Match.Offset)
		if d.Kind == dedup.KindJaccard {
			how += fmt.Sprintf(" (J=%.3f)", d.Match.Jaccard)
		}
		if d.Kind == dedup.KindTask {
			how = fmt.Sprintf("task %s: %s matched (%s at %s offset %d)", d.TaskID, d.Via, d.Match.Kind, d.Match.URI, d.Match.Offset)
		}
		fmt.Fprintf(w, "  %s  %s\n", d.ItemID, how)
	}
}

func matchIDs(ms []dedup.Match) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ItemID
	}
	return ids
}

// cpuSelf is this process's user+system CPU time.
func cpuSelf() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dedupBench times the screen and two baselines on the same files. CPU
// MB/s (bytes per CPU-second) is the per-core figure, meaningful on a busy
// machine where wall-clock rates are not.
func dedupBench(ctx context.Context, p *corpus.Prepared, plantedPath string) int {
	planted, err := readPlanted(plantedPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "glossobench dedup --bench:", err)
		return 2
	}
	idx, items, srcs, stored, shardBytes, workers, indexTime := p.Index, p.Items, p.Sources, p.Stored, p.ShardBytes, p.Workers, p.IndexTime
	var paths []string
	for _, s := range srcs {
		if s.Compression != "" {
			fmt.Fprintf(os.Stderr, "glossobench dedup --bench: %s is compressed; grep and cat need plain files\n", s.URI)
			return 2
		}
		paths = append(paths, s.URI)
	}
	mb := float64(stored) / 1e6
	fmt.Printf("corpus: %d files, %.1f MB; index: %d items built in %s; GOMAXPROCS %d\n\n", len(srcs), mb, idx.Len(), indexTime.Round(time.Millisecond), runtime.GOMAXPROCS(0))
	fmt.Printf("%-58s %10s %10s %10s\n", "", "wall s", "wall MB/s", "CPU MB/s")
	row := func(name string, wall, cpu time.Duration) {
		fmt.Printf("%-58s %10.2f %10.0f %10.0f\n", name, wall.Seconds(), mb/wall.Seconds(), mb/cpu.Seconds())
	}
	run := func(name string, argv ...string) bool {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdout = nil // /dev/null: cat has no early exit, so it reads every byte
		cmd.Stderr = os.Stderr
		t := time.Now()
		err := cmd.Run()
		wall := time.Since(t)
		if cmd.ProcessState == nil || err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", argv[0], err)
			return false
		}
		row(name, wall, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		return true
	}
	// cat first: it also warms the page cache for the others.
	run("cat CORPUS > /dev/null (warm-up)", append([]string{"cat"}, paths...)...)
	run("cat CORPUS > /dev/null", append([]string{"cat"}, paths...)...)

	// One worker, then the requested number: each run gets its own shard
	// plan, cut so that every worker has several shards to take.
	counts := []int{1}
	if workers > 1 {
		counts = append(counts, workers)
	}
	var matches []dedup.Match
	for _, w := range counts {
		shards := corpus.Plan(srcs, corpus.BalancedShardBytes(srcs, shardBytes, w))
		t, c := time.Now(), cpuSelf()
		ms, _, _, err := corpus.Scanner{Index: idx}.ScanAll(ctx, shards, w)
		if err != nil {
			fmt.Fprintln(os.Stderr, "glossobench dedup:", err)
			return 1
		}
		row(fmt.Sprintf("glossobench dedup, exact+Jaccard (%d worker(s), %d shards)", w, len(shards)), time.Since(t), cpuSelf()-c)
		if matches != nil && !slices.Equal(matchIDs(ms), matchIDs(matches)) {
			fmt.Fprintf(os.Stderr, "glossobench dedup: %d workers matched %d items, 1 worker %d\n", w, len(ms), len(matches))
			return 1
		}
		matches = ms
	}

	pat, err := os.CreateTemp("", "glossobench-dedup-patterns-*.txt")
	if err != nil {
		fmt.Fprintln(os.Stderr, "glossobench dedup:", err)
		return 1
	}
	defer os.Remove(pat.Name())
	for _, it := range items {
		fmt.Fprintln(pat, strings.Join(strings.Fields(it.Prompt), " "))
	}
	pat.Close()
	needle := map[string]string{} // item id -> its pattern line
	for _, it := range items {
		needle[it.ID] = strings.Join(strings.Fields(it.Prompt), " ")
	}
	found := []string{fmt.Sprintf("glossobench dedup: %d items matched%s", len(matches), planted.found(func(id string) bool {
		_, ok := slices.BinarySearchFunc(matches, id, func(m dedup.Match, id string) int { return strings.Compare(m.ItemID, id) })
		return ok
	}))}
	engines := []struct{ name, bin string }{{"grep", "grep"}, {"ripgrep", "rg"}}
	for _, e := range engines {
		if _, err := exec.LookPath(e.bin); err != nil {
			found = append(found, fmt.Sprintf("%s: not on PATH, not measured (Debian: apt-get install %s)", e.bin, map[string]string{"grep": "grep", "rg": "ripgrep"}[e.bin]))
			continue
		}
		g, err := grepCount(ctx, e.bin, pat.Name(), paths)
		if err != nil {
			fmt.Fprintln(os.Stderr, "glossobench dedup --bench:", err)
			return 1
		}
		argv := grepArgs(e.bin, "-c", pat.Name())
		row(fmt.Sprintf("%s ... | read (exact only, %d patterns)", strings.Join(argv[:len(argv)-1], " "), len(items)), g.wall, g.cpu)
		// Building the matcher for many patterns can be much of the
		// time; an empty input shows how much.
		if e, err := grepCount(ctx, e.bin, pat.Name(), []string{os.DevNull}); err == nil {
			fmt.Printf("%-58s %10.2f %10s %10s   (CPU %.2f s)\n", "  of which building the matcher (empty input)", e.wall.Seconds(), "", "", e.cpu.Seconds())
		}
		line := fmt.Sprintf("%s: %d matching lines (case kept, whitespace as in the items: %s does no normalisation)", e.name, g.lines, e.bin)
		if planted != nil {
			// Which needles occur: an untimed -o run.
			hits, err := grepFound(ctx, e.bin, pat.Name(), paths)
			if err != nil {
				fmt.Fprintln(os.Stderr, "glossobench dedup --bench:", err)
				return 1
			}
			line += planted.found(func(id string) bool { return hits[needle[id]] })
		}
		found = append(found, line)
	}
	fmt.Println()
	for _, f := range found {
		fmt.Println(f)
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("peak RSS of glossobench dedup --bench: %d MB\n", ru.Maxrss>>10) // Linux: KiB
	return 0
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
func grepCount(ctx context.Context, bin, patterns string, paths []string) (grepRun, error) {
	var out bytes.Buffer
	argv := append(grepArgs(bin, "-c", patterns), paths...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
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
func grepFound(ctx context.Context, bin, patterns string, paths []string) (map[string]bool, error) {
	argv := append(grepArgs(bin, "-o", patterns), paths...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
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

// plantedItems are the items a benchmark corpus holds copies of, by id,
// with how each was planted (verbatim, joined, recased, oneword).
type plantedItems map[string]string

// readPlanted reads id<TAB>how lines; "" gives nil.
func readPlanted(path string) (plantedItems, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := plantedItems{}
	for n, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		id, how, ok := strings.Cut(l, "\t")
		if !ok || id == "" {
			return nil, fmt.Errorf("%s:%d: want id<TAB>how, got %q", path, n+1, l)
		}
		p[id] = how
	}
	return p, nil
}

// found says how many planted items has reports found, in all and by how
// they were planted: "; planted found 80 of 80 (joined 20/20, ...)".
func (p plantedItems) found(has func(id string) bool) string {
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
