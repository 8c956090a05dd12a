package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/glossobench/glossobench/infra/results/viewer"
	"github.com/glossobench/glossobench/infra/store"
)

func init() {
	register("view", "serve a local web app over a store: its runs, a run's axes, an axis's items with filters and search", runView)
}

func runView(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return viewMain(ctx, args, os.Stdout, os.Stderr)
}

// viewMain serves until ctx ends.
func viewMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("view", stderr, "view [--store URI|FOLDER] [--addr 127.0.0.1:7788]",
		"\nServes the runs of the store until interrupted. It only reads the store, and the",
		"pages load nothing from the network.")
	uri := fs.String("store", defaultStore, "store `URI|FOLDER` to read (a folder, file:DIR or s3://bucket/prefix?...)")
	addr := fs.String("addr", "127.0.0.1:7788", "`HOST:PORT` to serve on (port 0 picks a free one)")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	fail := failer(stderr, "view")
	st, err := store.Open(ctx, *uri)
	if err != nil {
		return fail(err)
	}
	err = viewer.ListenAndServe(ctx, st, *addr, func(a string) {
		fmt.Fprintf(stdout, "glossobench view: %s on http://%s/\n", st.Describe(), a)
	})
	if err != nil {
		return fail(err)
	}
	return 0
}
