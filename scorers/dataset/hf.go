package dataset

import (
	"fmt"
	"strings"
)

// HFPath is a parsed hf://datasets/OWNER/NAME@REVISION/PATH.
type HFPath struct {
	Repo     string // OWNER/NAME
	Revision string // a commit, tag or branch; a commit pins best
	File     string // path inside the repository
	Query    string // what followed "?", passed to the opener
}

// ParseHF parses a Hugging Face Hub dataset file URI. The revision is
// required: a file is pinned by its revision and its SHA-256.
func ParseHF(uri string) (HFPath, error) {
	rest, ok := strings.CutPrefix(uri, "hf://datasets/")
	if !ok {
		return HFPath{}, fmt.Errorf("%q: want hf://datasets/OWNER/NAME@REVISION/PATH", uri)
	}
	rest, query, _ := strings.Cut(rest, "?")
	owner, rest, ok1 := strings.Cut(rest, "/")
	nameRev, file, ok2 := strings.Cut(rest, "/")
	name, rev, ok3 := strings.Cut(nameRev, "@")
	if !ok1 || !ok2 || !ok3 || owner == "" || name == "" || rev == "" || file == "" || strings.Contains(file, "..") {
		return HFPath{}, fmt.Errorf("%q: want hf://datasets/OWNER/NAME@REVISION/PATH (the revision is required)", uri)
	}
	return HFPath{Repo: owner + "/" + name, Revision: rev, File: file, Query: query}, nil
}
