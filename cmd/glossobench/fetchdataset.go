package main

import (
	"context"
	"fmt"
	"io"

	"github.com/glossobench/glossobench/infra/datasource"
)

func init() {
	registerIO("fetch-dataset", "fetch hf://datasets/OWNER/NAME@REVISION/PATH files into the cache and print the sha256 to pin", fetchDatasetMain)
}

// fetchDatasetMain downloads each hf:// file once (HF_ENDPOINT, HF_TOKEN,
// GLOSSOBENCH_HF_CACHE as for a run) and prints "sha256  uri", the value a
// config's sha256 key pins.
func fetchDatasetMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("fetch-dataset", stderr, "fetch-dataset hf://datasets/OWNER/NAME@REVISION/PATH...")
	uris, code, ok := parseArgs(fs, args, anyArgs)
	if !ok {
		return code
	}
	if len(uris) == 0 {
		return usageError(fs, "no dataset URI given")
	}
	hf := datasource.DefaultHF()
	for _, uri := range uris {
		sum, err := hf.Hash(context.Background(), uri)
		if err != nil {
			fmt.Fprintln(stderr, "fetch-dataset:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s  %s\n", sum, uri)
	}
	return 0
}
