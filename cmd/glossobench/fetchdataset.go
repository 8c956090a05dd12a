package main

import (
	"context"
	"fmt"
	"io"

	"github.com/glossobench/glossobench/infra/datasource"
)

func init() {
	registerIO("fetch-dataset", "fetch hf:// dataset files (or a Hub dataset's config and split) into the cache and print the sha256 to pin", fetchDatasetMain)
}

// fetchDatasetMain downloads each hf:// file once (HF_ENDPOINT, HF_TOKEN,
// GLOSSOBENCH_HF_CACHE as for a run) and prints "sha256  uri", the value a
// config's sha256 key pins. With --config and --split each URI names a
// repository (hf://datasets/OWNER/NAME@REVISION) and the value pins the
// split's Parquet files as a set.
func fetchDatasetMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("fetch-dataset", stderr, "fetch-dataset hf://datasets/OWNER/NAME@REVISION/PATH...\n       glossobench fetch-dataset --config CONFIG --split SPLIT hf://datasets/OWNER/NAME@REVISION...")
	config := fs.String("config", "", "a Hub dataset's configuration (with --split; the URIs name repositories)")
	split := fs.String("split", "", "a Hub dataset's split (with --config)")
	uris, code, ok := parseArgs(fs, args, anyArgs)
	if !ok {
		return code
	}
	if len(uris) == 0 {
		return usageError(fs, "no dataset URI given")
	}
	if (*config == "") != (*split == "") {
		return usageError(fs, "--config and --split go together")
	}
	hf := datasource.DefaultHF()
	for _, uri := range uris {
		if *config != "" {
			files, sum, err := hf.FetchSet(context.Background(), uri, *config, *split, "")
			if err != nil {
				fmt.Fprintln(stderr, "fetch-dataset:", err)
				return 1
			}
			plural := "s"
			if len(files) == 1 {
				plural = ""
			}
			fmt.Fprintf(stdout, "%s  %s config %s split %s (%d Parquet file%s)\n", sum, uri, *config, *split, len(files), plural)
			continue
		}
		sum, err := hf.Hash(context.Background(), uri)
		if err != nil {
			fmt.Fprintln(stderr, "fetch-dataset:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s  %s\n", sum, uri)
	}
	return 0
}
