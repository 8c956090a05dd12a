package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/glossobench/glossobench/scorers/checks/audit"
)

func init() {
	register("audit", "source-identity leakage audit of a pooled test set (three AUCs, L, one verdict)", runAudit)
}

func runAudit(args []string) int {
	return auditMain(args, os.Stdout, os.Stderr)
}

func auditMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("audit", stderr, "audit --data FILE --label COL --source COL --measurements C1,C2,... [--detector fixed|mean-half|rf|logreg|each] [--folds 5] [--seed N] [--floor 0.65] [--band 0.90] [--shuffles 1000] [--json] [--plot FILE]",
		"\nScores the pooled rows three ways (headline, measurements-only, source-only; each a ROC AUC),",
		"prints L = source-only ÷ headline and reads it by the paper's rule (Xia & Aykent, AACL-IJCNLP 2026).")
	def := audit.DefaultOptions()
	dataPath := fs.String("data", "", "pooled rows, `FILE`.csv or .jsonl (optionally .gz) (required)")
	label := fs.String("label", "", "yes/no label `column` (1/0, true/false, yes/no) (required)")
	source := fs.String("source", "", "source tag `column` (required)")
	measurements := fs.String("measurements", "", "comma-separated measurement `columns` (required)")
	detector := fs.String("detector", def.Detector, "fixed | mean-half | rf | logreg | each")
	rating := fs.String("rating", "", "with --detector fixed: the measurement used as the rating (default the first)")
	folds := fs.Int("folds", def.Folds, "stratified folds for rf and logreg")
	seed := fs.Uint64("seed", def.Seed, "seed for folds, forests, bootstrap and shuffles")
	floor := fs.Float64("floor", def.Floor, "floor on the headline (the authors' default 0.65)")
	band := fs.Float64("band", def.Band, "band on L (the authors' default 0.90)")
	coin := fs.Float64("coin-flip", def.CoinFlip, "|source-only − 0.50| at most this reads as the coin flip")
	shuffles := fs.Int("shuffles", def.Shuffles, "source-tag shuffles (0 skips)")
	retrain := fs.String("shuffle-retrain", "auto", "retrain rf/logreg per shuffle: auto | always | never")
	bootstrap := fs.Int("bootstrap", def.Bootstrap, "bootstrap resamples for the headline's 95% interval (0 skips it, and with it the stricter floor rule)")
	trees := fs.Int("trees", def.Trees, "trees per forest (rf)")
	fpTrees := fs.Int("fingerprint-trees", def.FingerprintTrees, "trees in the source-fingerprint forest (negative skips)")
	asJSON := fs.Bool("json", false, "print the report as JSON with every number")
	plotPath := fs.String("plot", "", "also draw the three marks on one ruler to `FILE`.png or .svg")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	if *dataPath == "" || *label == "" || *source == "" || *measurements == "" {
		return usageError(fs, "--data, --label, --source and --measurements are required")
	}
	var names []string
	for _, m := range strings.Split(*measurements, ",") {
		if m = strings.TrimSpace(m); m != "" {
			names = append(names, m)
		}
	}
	switch *retrain {
	case "auto", "always", "never":
	default:
		fmt.Fprintf(stderr, "glossobench audit: --shuffle-retrain %q: want auto, always or never\n", *retrain)
		return 2
	}
	cols := audit.Columns{Label: *label, Source: *source, Measurements: names}
	start := time.Now()
	rows, err := audit.ReadFile(*dataPath, cols)
	if err != nil {
		fmt.Fprintln(stderr, "glossobench audit:", err)
		return 1
	}
	opt := def
	opt.Detector, opt.Rating, opt.Folds, opt.Seed = *detector, *rating, *folds, *seed
	opt.Floor, opt.Band, opt.CoinFlip = *floor, *band, *coin
	opt.Shuffles, opt.ShuffleRetrain, opt.Bootstrap = *shuffles, *retrain, *bootstrap
	opt.Trees, opt.FingerprintTrees, opt.SourceColumn, opt.LabelColumn = *trees, *fpTrees, *source, *label
	if !(opt.Floor > 0 && opt.Floor < 1) || !(opt.Band > 0) || opt.CoinFlip < 0 {
		fmt.Fprintln(stderr, "glossobench audit: want 0 < floor < 1, band > 0 and coin-flip ≥ 0")
		return 2
	}
	if opt.Shuffles < 0 || opt.Bootstrap < 0 {
		fmt.Fprintln(stderr, "glossobench audit: --shuffles and --bootstrap must be ≥ 0")
		return 2
	}
	if opt.Detector == audit.DetectorRF || opt.Detector == audit.DetectorLogReg {
		if opt.Folds < 2 {
			fmt.Fprintln(stderr, "glossobench audit: --folds must be at least 2")
			return 2
		}
	}
	stop := auditProgress(stderr, start, &opt)
	rep, err := audit.Run(rows, names, opt)
	stop()
	if err != nil {
		fmt.Fprintf(stderr, "glossobench audit: %s: %v\n", *dataPath, err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(stderr, "glossobench audit:", err)
			return 1
		}
	} else {
		fmt.Fprintln(stdout, rep.Line())
		fmt.Fprint(stdout, rep.Details())
	}
	if *plotPath != "" {
		if err := rep.Plot(*plotPath); err != nil {
			fmt.Fprintln(stderr, "glossobench audit:", err)
			return 1
		}
	}
	return 0
}

// progressEvery is how often a long audit prints the step it is on.
const progressEvery = 3 * time.Second

// auditProgress prints, every few seconds while the audit runs, one line on
// stderr naming the step it is on and the time since the command started;
// an audit done within a few seconds prints nothing. The returned function
// stops it.
func auditProgress(w io.Writer, start time.Time, opt *audit.Options) (stop func()) {
	var mu sync.Mutex
	step := "reading rows"
	opt.Progress = func(s string) {
		mu.Lock()
		step = s
		mu.Unlock()
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				mu.Lock()
				s := step
				mu.Unlock()
				fmt.Fprintf(w, "glossobench audit: %s (%.0f s)\n", s, now.Sub(start).Seconds())
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
