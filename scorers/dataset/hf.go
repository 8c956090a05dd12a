package dataset

import (
	"fmt"
	"net/url"
	"strings"
)

// HFPath is a parsed hf://datasets/OWNER/NAME@REVISION/PATH.
type HFPath struct {
	Repo     string // OWNER/NAME
	Revision string // a commit, tag or branch, unescaped; a commit pins best
	File     string // path inside the repository; "" for a repository named alone
	Query    string // what followed "?", passed to the opener
}

// ParquetBranch is the branch where the Hub keeps its Parquet export of a
// dataset; "~parquet" in a URI names it (as DuckDB spells it), and so does
// "refs%2Fconvert%2Fparquet" (as huggingface_hub's HfFileSystem does).
const ParquetBranch = "refs/convert/parquet"

// ParseHF parses a Hugging Face Hub dataset file URI. The revision is
// required: a file is pinned by its revision and its SHA-256.
func ParseHF(uri string) (HFPath, error) {
	p, err := parseHF(uri)
	if err != nil || p.File == "" {
		return HFPath{}, fmt.Errorf("%q: want hf://datasets/OWNER/NAME@REVISION/PATH (the revision is required)", uri)
	}
	return p, nil
}

// ParseHFRepo parses hf://datasets/OWNER/NAME@REVISION, a dataset named by
// repository alone (its files chosen by configuration and split).
func ParseHFRepo(uri string) (HFPath, error) {
	p, err := parseHF(uri)
	if err != nil || p.File != "" || p.Query != "" {
		return HFPath{}, fmt.Errorf("%q: want hf://datasets/OWNER/NAME@REVISION with config and split (the revision is required; no file path)", uri)
	}
	return p, nil
}

func parseHF(uri string) (HFPath, error) {
	rest, ok := strings.CutPrefix(uri, "hf://datasets/")
	if !ok {
		return HFPath{}, fmt.Errorf("not hf://datasets/")
	}
	rest, query, _ := strings.Cut(rest, "?")
	owner, rest, ok1 := strings.Cut(rest, "/")
	nameRev, file, _ := strings.Cut(strings.TrimSuffix(rest, "/"), "/")
	name, rev, ok3 := strings.Cut(nameRev, "@")
	if !ok1 || !ok3 || owner == "" || name == "" || rev == "" || strings.Contains(file, "..") {
		return HFPath{}, fmt.Errorf("malformed")
	}
	rev, err := url.PathUnescape(rev)
	if err != nil {
		return HFPath{}, err
	}
	if rev == "~parquet" {
		rev = ParquetBranch
	}
	return HFPath{Repo: owner + "/" + name, Revision: rev, File: file, Query: query}, nil
}
