// Package datasource registers the remote dataset sources with
// scorers/dataset: s3:// objects read through infra/store, and
// hf://datasets/OWNER/NAME@REVISION/PATH files fetched once from the
// Hugging Face Hub into a local cache and pinned by SHA-256, and
// hf://datasets/OWNER/NAME@REVISION by configuration and split, its
// Parquet files pinned as a set (hubset.go). A program that
// loads datasets imports it for its side effect.
package datasource

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers/dataset"
)

func init() {
	dataset.RegisterScheme("s3", openS3)
	dataset.RegisterScheme("hf", func(ctx context.Context, uri, pin string) (io.ReadCloser, error) {
		return DefaultHF().Open(ctx, uri, pin)
	})
	dataset.RegisterSetScheme("hf", func(ctx context.Context, uri, config, split, pin string) ([]dataset.SetFile, error) {
		return DefaultHF().OpenSet(ctx, uri, config, split, pin)
	})
}

// openS3 opens s3://bucket/dir/file?endpoint=... : the store URI
// s3://bucket/dir?... (its query parameters, credentials from the
// environment variables it names) and the object file under it.
func openS3(ctx context.Context, uri, _ string) (io.ReadCloser, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	key := strings.Trim(u.Path, "/")
	if key == "" {
		return nil, fmt.Errorf("%s: no object key", uri)
	}
	dir, file := path.Split(key)
	storeURI := "s3://" + u.Host + "/" + strings.TrimSuffix(dir, "/")
	if u.RawQuery != "" {
		storeURI += "?" + u.RawQuery
	}
	st, err := store.Open(ctx, storeURI)
	if err != nil {
		return nil, err
	}
	rc, err := st.Open(ctx, file)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", uri, err)
	}
	return rc, nil
}
