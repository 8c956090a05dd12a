package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Replace stores data under key, overwriting what is there. It is not part
// of Store: checkpoints are create-only. It exists for files derived from
// create-only objects and rebuilt from them at will, such as a leaderboard's
// leaderboard.jsonl. A reader sees the old file or the new one, never a mix.
func (l *Local) Replace(ctx context.Context, key string, data []byte) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store: replace: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: replace %q: %w", key, err)
	}
	root, err := l.openRoot()
	if err != nil {
		return fmt.Errorf("store: replace %q in %s: %w", key, l.Describe(), err)
	}
	defer root.Close()
	dir := filepath.Dir(name(key))
	if err := mkdirAll(root, dir); err != nil {
		return fmt.Errorf("store: replace %q in %s: %w", key, l.Describe(), err)
	}
	tmp, err := writeTemp(root, dir, func(w io.Writer) error { _, err := w.Write(data); return err })
	if err != nil {
		return fmt.Errorf("store: replace %q in %s: %w", key, l.Describe(), err)
	}
	if err := root.Rename(tmp, name(key)); err != nil {
		root.Remove(tmp)
		return fmt.Errorf("store: replace %q in %s: %w", key, l.Describe(), err)
	}
	return syncDir(root, dir)
}

// Replace stores data under key with an unconditional write; see
// Local.Replace for what it is for.
func (s *S3) Replace(ctx context.Context, key string, data []byte) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store: replace: %w", err)
	}
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(s.cfg.Bucket),
		Key:           aws.String(s.objectKey(key)),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return fmt.Errorf("store: replace %q in %s: %w", key, s.Describe(), err)
	}
	return nil
}
