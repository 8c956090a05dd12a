package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/glossobench/glossobench/scorers/checks/dedup"
)

// FingerprintSource fingerprints a corpus file. A local file (or any source
// without an ETag) is streamed once through SHA-256; an S3 object with an
// ETag is named by its size and ETag, without a second read of the object.
func FingerprintSource(ctx context.Context, open Opener, src Source) (dedup.Fingerprint, error) {
	if src.ETag != "" {
		return dedup.Fingerprint{URI: src.URI, Size: src.Size, ETag: src.ETag}, nil
	}
	if open == nil {
		open = Open
	}
	rc, size, err := open(ctx, src, 0, -1)
	if err != nil {
		return dedup.Fingerprint{}, fmt.Errorf("%s: %w", src.URI, err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, ctxReader{ctx, rc}, make([]byte, 1<<20))
	if err != nil {
		return dedup.Fingerprint{}, fmt.Errorf("%s: %w", src.URI, err)
	}
	if size >= 0 && n != size {
		return dedup.Fingerprint{}, fmt.Errorf("%s: read %d bytes, size says %d (file changed?)", src.URI, n, size)
	}
	if src.Size > 0 && n != src.Size {
		return dedup.Fingerprint{}, fmt.Errorf("%s: read %d bytes, %d when the corpus was listed (file changed?)", src.URI, n, src.Size)
	}
	return dedup.Fingerprint{URI: src.URI, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// ctxReader stops a long read when the context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
