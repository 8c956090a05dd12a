package main

import (
	"fmt"
	"io"
	"os"
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
	opt := audit.DefaultOptions()
	dataPath := fs.String("data", "", "pooled rows, `FILE`.csv or .jsonl (optionally .gz) (required)")
	fs.StringVar(&opt.LabelColumn, "label", "", "yes/no label `column` (1/0, true/false, yes/no) (required)")
	fs.StringVar(&opt.SourceColumn, "source", "", "source tag `column` (required)")
	measurements := fs.String("measurements", "", "comma-separated measurement `columns` (required)")
	fs.StringVar(&opt.Detector, "detector", opt.Detector, "fixed | mean-half | rf | logreg | each")
	fs.StringVar(&opt.Rating, "rating", "", "with --detector fixed: the measurement used as the rating (default the first)")
	fs.IntVar(&opt.Folds, "folds", opt.Folds, "stratified folds for rf and logreg")
	fs.Uint64Var(&opt.Seed, "seed", opt.Seed, "seed for folds, forests, bootstrap and shuffles")
	fs.Float64Var(&opt.Floor, "floor", opt.Floor, "floor on the headline (the authors' default 0.65)")
	fs.Float64Var(&opt.Band, "band", opt.Band, "band on L (the authors' default 0.90)")
	fs.Float64Var(&opt.CoinFlip, "coin-flip", opt.CoinFlip, "|source-only − 0.50| at most this reads as the coin flip")
	fs.IntVar(&opt.Shuffles, "shuffles", opt.Shuffles, "source-tag shuffles (0 skips)")
	fs.StringVar(&opt.ShuffleRetrain, "shuffle-retrain", "auto", "retrain rf/logreg per shuffle: auto | always | never")
	fs.IntVar(&opt.Bootstrap, "bootstrap", opt.Bootstrap, "bootstrap resamples for the headline's 95% interval (0 skips it, and with it the stricter floor rule)")
	fs.IntVar(&opt.Trees, "trees", opt.Trees, "trees per forest (rf)")
	fs.IntVar(&opt.FingerprintTrees, "fingerprint-trees", opt.FingerprintTrees, "trees in the source-fingerprint forest (negative skips)")
	asJSON := fs.Bool("json", false, "print the report as JSON with every number")
	plotPath := fs.String("plot", "", "also draw the three marks on one ruler to `FILE`.png or .svg")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	if *dataPath == "" || opt.LabelColumn == "" || opt.SourceColumn == "" || *measurements == "" {
		return usageError(fs, "--data, --label, --source and --measurements are required")
	}
	if err := opt.Check(); err != nil {
		fmt.Fprintln(stderr, "glossobench audit:", err)
		return 2
	}
	fail := failer(stderr, "audit")
	stop := auditProgress(stderr, time.Now(), &opt)
	rep, err := audit.RunFile(*dataPath, audit.Columns{Label: opt.LabelColumn, Source: opt.SourceColumn, Measurements: audit.SplitNames(*measurements)}, opt)
	stop()
	if err != nil {
		return fail(err)
	}
	if *asJSON {
		if err := printJSON(stdout, rep); err != nil {
			return fail(err)
		}
	} else {
		fmt.Fprintln(stdout, rep.Line())
		fmt.Fprint(stdout, rep.Details())
	}
	if *plotPath != "" {
		if err := rep.Plot(*plotPath); err != nil {
			return fail(err)
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
