package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
)

var sha256RE = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

// validateDatasetSource checks what a dataset declares about its file and
// its field mapping before anything is read: the file format, the SHA-256
// pin (required for hf:// file paths), a Hub dataset's config and split, the few-shot file and the mapping itself
// (keys the axis reads, required keys, templates that parse). df is the
// dataset's config path (axes.knowledge.datasets[0]).
func validateDatasetSource(df, axis string, d scorers.DatasetConfig) error {
	src := d.Source("")
	if _, err := src.FileFormat(); err != nil {
		return fmt.Errorf("%s.%w", df, err)
	}
	if d.SHA256 != "" && !sha256RE.MatchString(d.SHA256) {
		return fmt.Errorf("%s.sha256: want 64 hex digits, got %q", df, d.SHA256)
	}
	if d.Config != "" || d.Split != "" {
		// A set's pin may be missing here: reading it fetches the set
		// and refuses with the value to paste.
		if d.Config == "" || d.Split == "" {
			return fmt.Errorf("%s: config and split name a Hub dataset's table together; give both (config %q, split %q)", df, d.Config, d.Split)
		}
		if _, err := dataset.ParseHFRepo(d.Path); err != nil {
			return fmt.Errorf("%s.path: with config and split, %w", df, err)
		}
	} else if strings.HasPrefix(d.Path, "hf://") {
		if _, err := dataset.ParseHFRepo(d.Path); err == nil {
			return fmt.Errorf("%s.path: %s names a repository: give config and split (its Parquet files), or a file path after the revision", df, d.Path)
		}
		if _, err := dataset.ParseHF(d.Path); err != nil {
			return fmt.Errorf("%s.path: %w", df, err)
		}
		if d.SHA256 == "" {
			return fmt.Errorf("%s.sha256: required for an hf:// path, so a run never reads changed data (glossobench fetch-dataset prints it)", df)
		}
	}
	kind := scorers.AxisKind(axis)
	if d.Fields != nil {
		if err := d.Fields.Check(kind); err != nil {
			// A preset supplies the keys it lacks; the axis checks the merge.
			if d.Format == "" || d.Format == kind || !strings.Contains(err.Error(), "required") {
				return fmt.Errorf("%s.%w", df, err)
			}
		}
	}
	if f := d.Fewshot; f != nil {
		if kind != "mcq" {
			return fmt.Errorf("%s.fewshot: only the multiple-choice axes read few-shot examples (nlg: options.fewshot)", df)
		}
		if f.Path == "" || f.N < 1 {
			return fmt.Errorf("%s.fewshot: path and n (at least 1) are required", df)
		}
		if _, err := f.Source("").FileFormat(); err != nil {
			return fmt.Errorf("%s.fewshot.%w", df, err)
		}
		if strings.HasPrefix(f.Path, "hf://") && f.SHA256 == "" {
			return fmt.Errorf("%s.fewshot.sha256: required for an hf:// path", df)
		}
	}
	return nil
}
