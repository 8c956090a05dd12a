package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

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

// dedupAbout is the text of dedup's usage between its synopsis and flags.
const dedupAbout = "\n" +
	"Screens eval items against training-corpus files, globs, directories or S3 prefixes (text, lines or\n" +
	"JSONL; .gz and .zst read as compressed) and reports the items a run would drop, kept/dropped and the\n" +
	"task-level contamination rate per axis, the corpus fingerprints and the kept-id SHA-256.\n\n" +
	"--items is either a run config (YAML; .yaml/.yml, or any file not starting with '{'): the items of\n" +
	"every dataset it names are loaded exactly as a run's Prepare loads them, and the config's dedup\n" +
	"section supplies the corpus (unless --corpus is given) and the options (unless set by flags), so\n" +
	"the kept SHA-256 equals the one a run with that config publishes. Or a JSONL file of items\n" +
	"(.jsonl/.ndjson/.json, or content starting with '{'), at least {\"id\",\"prompt\"} per line.\n\n" +
	"S3 prefixes take the query parameters of an S3 store URI: endpoint, region, path_style,\n" +
	"access_key_env, secret_key_env (names of environment variables, never keys).\n\nflags:"

func runDedup(args []string) int {
	fs := commandFlags("dedup", os.Stderr, "dedup --items CONFIG.yaml|ITEMS.jsonl [--corpus PATH|s3://BUCKET/PREFIX/?... ...] [flags] [PATH ...]",
		dedupAbout)
	var entries multiFlag
	itemsPath := fs.String("items", "", "run config (YAML) or eval items (JSONL) (required)")
	fs.Var(&entries, "corpus", "corpus file, glob, directory or s3:// prefix (repeatable; trailing arguments count too; default: the config's dedup.corpus)")
	var screen corpus.Screen
	fs.StringVar(&screen.Format, "format", "", "corpus format: text (blank-line separated documents), lines or jsonl; default from the file name")
	fs.StringVar(&screen.TextField, "text-field", corpus.DefaultTextField, "JSONL field holding the document text (default: the config's dedup.text_field, else text)")
	fs.IntVar(&screen.Options.MinExactLen, "min-len", dedup.DefaultMinExactLen, "shortest prompt (characters) searched as a substring; shorter ones match whole documents/lines (default: the config's dedup.min_chars)")
	fs.IntVar(&screen.Options.ShingleN, "ngram", dedup.DefaultShingleN, "word n-gram size of the Jaccard shingles")
	fs.Float64Var(&screen.Options.Jaccard, "jaccard", dedup.DefaultJaccard, "shingle Jaccard threshold (default: the config's dedup.jaccard)")
	fs.BoolVar(&screen.Options.NoJaccard, "no-jaccard", false, "exact matching only")
	shardMB := fs.Int64("shard-mb", 256, "split uncompressed files into shards of at most this many MB (smaller when needed to give every worker several)")
	fs.IntVar(&screen.Workers, "workers", runtime.GOMAXPROCS(0), "shards screened in parallel")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.BoolVar(&screen.NoFingerprint, "no-fingerprint", false, "skip the SHA-256 of local corpus files (saves a second read; S3 objects are named by their ETag)")
	bench := fs.Bool("bench", false, "time the screen and print MB per CPU-second beside GNU grep (grep -F -c -f ITEMS CORPUS), ripgrep (rg -j1 -F -c -f ITEMS CORPUS, when on PATH) and cat CORPUS > /dev/null; grep's and rg's counts are read through a pipe, as GNU grep writing to /dev/null stops at the first match")
	planted := fs.String("planted", "", "with --bench: TSV of planted item ids (id<TAB>how, as testdata/dedup/gen writes); print how many of them each engine found")
	paths, code, ok := parseArgs(fs, args, anyArgs)
	if !ok {
		return code
	}
	entries = append(entries, paths...)
	if *itemsPath == "" {
		return usageError(fs, "--items is required")
	}
	fail := failer(os.Stderr, "dedup")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	items, entries, err := dedupItems(fs, *itemsPath, &screen, entries)
	if err != nil {
		return fail(err)
	}
	if len(entries) == 0 {
		return usageError(fs, "no corpus: give --corpus (or a config with dedup.corpus)")
	}
	screen.ShardBytes = *shardMB << 20
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
	if *asJSON {
		if err := printJSON(os.Stdout, res.Report); err != nil {
			return fail(err)
		}
		return 0
	}
	res.WriteText(os.Stdout, p.Stored)
	return 0
}

// dedupItems loads the items to screen from --items: a run config's items
// exactly as a run's Prepare loads them, the config supplying the corpus
// (unless entries name one) and the screen's settings no flag set on fs
// overrides; or an items JSONL. It returns the items and the corpus entries.
func dedupItems(fs *flag.FlagSet, itemsPath string, screen *corpus.Screen, entries []string) ([]scorers.Item, []string, error) {
	isConfig, err := looksLikeConfig(itemsPath)
	if err != nil {
		return nil, nil, err
	}
	if !isConfig {
		items, err := dedup.LoadItemsFile(itemsPath)
		return items, entries, err
	}
	cfg, err := config.Load(itemsPath, config.Overrides{})
	if err != nil {
		return nil, nil, err
	}
	axes, skipped, err := runplan.LoadAxes(cfg, runplan.ModelMeta(cfg))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", itemsPath, err)
	}
	var items []scorers.Item
	for _, ax := range axes {
		items = append(items, ax.Items...)
	}
	for _, s := range skipped {
		fmt.Fprintf(os.Stderr, "glossobench dedup: axis %s not screened, as a run would not score it: %s\n", s.Axis, s.Reason)
	}
	// The run's options, unless a flag says otherwise.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	runOpt := runplan.DedupOptions(cfg)
	if !set["min-len"] {
		screen.Options.MinExactLen = runOpt.MinExactLen
	}
	if !set["jaccard"] {
		screen.Options.Jaccard = runOpt.Jaccard
	}
	if !set["text-field"] && cfg.Dedup.TextField != "" {
		screen.TextField = cfg.Dedup.TextField
	}
	if len(entries) == 0 {
		entries = cfg.Dedup.Corpus
	}
	return items, entries, nil
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

// dedupBench runs --bench: the screen timed beside grep, ripgrep and cat
// (corpus.Prepared.Bench). A planted list it cannot read or a compressed
// corpus is a usage error.
func dedupBench(ctx context.Context, p *corpus.Prepared, plantedPath string) int {
	planted, err := corpus.ReadPlanted(plantedPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "glossobench dedup --bench:", err)
		return 2
	}
	if err := p.Bench(ctx, os.Stdout, os.Stderr, planted); err != nil {
		fmt.Fprintln(os.Stderr, "glossobench dedup --bench:", err)
		if errors.As(err, new(*corpus.CompressedError)) {
			return 2
		}
		return 1
	}
	return 0
}
