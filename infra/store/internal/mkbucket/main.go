// Command mkbucket creates the bucket named by an s3:// store URI if it does
// not exist. .ci/versitygw.sh runs it so the CI scripts need no S3 client
// besides Go. Credentials come from the SDK's default chain or the URI's
// access_key_env/secret_key_env.
//
//	go run ./infra/store/internal/mkbucket 's3://bucket?endpoint=http://127.0.0.1:7070&path_style=true'
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/glossobench/glossobench/infra/store"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mkbucket s3://bucket?endpoint=...&path_style=true")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := store.ParseS3URI(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkbucket:", err)
		os.Exit(1)
	}
	s, err := store.NewS3(ctx, cfg)
	if err == nil {
		err = s.EnsureBucket(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkbucket:", err)
		os.Exit(1)
	}
}
