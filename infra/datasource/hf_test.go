package datasource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// hubServer serves the Hub's resolve URLs the way the Hub does: an LFS
// file answers with a 302 to a CDN URL and names its SHA-256 in
// X-Linked-Etag; a file kept in git answers 200 with a git blob ETag.
// "changed.csv" is served with bytes other than those its pin was taken of.
func hubServer(t *testing.T, files map[string]string, requests *atomic.Int32) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	mux.HandleFunc("/datasets/", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		rest, ok := strings.CutPrefix(r.URL.Path, "/datasets/owner/name/resolve/abc123/")
		body, found := files[rest]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		if strings.HasSuffix(rest, ".parquet") || strings.HasSuffix(rest, ".csv") {
			w.Header().Set("X-Linked-Etag", `"`+sum(body)+`"`)
			_, port, _ := strings.Cut(r.Host, ":")
			w.Header().Set("Location", "http://127.0.0.1:"+port+"/cdn/"+rest) // the CDN: another host
			w.WriteHeader(http.StatusFound)
			return
		}
		w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef01234567"`)
		io.WriteString(w, body)
	})
	mux.HandleFunc("/cdn/", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") != "" {
			http.Error(w, "the token must not follow the redirect", http.StatusBadRequest)
			return
		}
		body := files[strings.TrimPrefix(r.URL.Path, "/cdn/")]
		w.Header().Set("ETag", `"`+sum(body)+`"`)
		io.WriteString(w, body)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func sha(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

func TestHFFetchPinsAndCaches(t *testing.T) {
	files := map[string]string{"data/test.csv": "q,A,B,key\nx,a,b,A\n", "README.jsonl": `{"a":1}` + "\n"}
	var n atomic.Int32
	srv := hubServer(t, files, &n)
	// The redirect goes to another host name of the same server, so the
	// token-stripping rule is exercised.
	h := &HF{Endpoint: strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), Cache: t.TempDir(), Token: "tok"}
	ctx := context.Background()
	read := func(h *HF, uri, pin string) (string, error) {
		rc, err := h.Open(ctx, uri, pin)
		if err != nil {
			return "", err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		return string(b), err
	}
	uri := "hf://datasets/owner/name@abc123/data/test.csv"
	got, err := read(h, uri, sha(files["data/test.csv"]))
	if err != nil || got != files["data/test.csv"] {
		t.Fatalf("first fetch: %q, %v", got, err)
	}
	if n.Load() != 2 {
		t.Fatalf("first fetch made %d requests, want 2 (resolve, then the redirect)", n.Load())
	}
	// Warm cache: offline, no requests, even with the server gone.
	off := &HF{Endpoint: "http://127.0.0.1:1", Cache: h.Cache, Offline: true}
	if got, err := read(off, uri, sha(files["data/test.csv"])); err != nil || got != files["data/test.csv"] {
		t.Fatalf("offline warm read: %q, %v", got, err)
	}
	if n.Load() != 2 {
		t.Fatalf("a warm read made requests (%d)", n.Load())
	}
	// A file in git (no redirect, a git ETag) is verified by its bytes.
	if got, err := read(h, "hf://datasets/owner/name@abc123/README.jsonl", sha(files["README.jsonl"])); err != nil || got != files["README.jsonl"] {
		t.Fatalf("git file: %q, %v", got, err)
	}
	// A pin the Hub's X-Linked-Etag contradicts is refused before the body.
	before := n.Load()
	wrong := sha("other bytes")
	if _, err := read(h, "hf://datasets/owner/name@abc123/data/test.csv", wrong); err == nil || !strings.Contains(err.Error(), "X-Linked-Etag") || !strings.Contains(err.Error(), wrong) {
		t.Fatalf("mismatched pin: %v", err)
	}
	if n.Load()-before != 1 {
		t.Fatalf("a contradicted pin made %d requests, want 1", n.Load()-before)
	}
	// A file whose bytes differ from its pin (no linked ETag to tell) is
	// refused and not cached.
	if _, err := read(h, "hf://datasets/owner/name@abc123/README.jsonl", wrong); err == nil || !strings.Contains(err.Error(), "the file changed") {
		t.Fatalf("changed git file: %v", err)
	}
	if _, err := read(off, "hf://datasets/owner/name@abc123/README.jsonl", wrong); err == nil || !strings.Contains(err.Error(), "HF_HUB_OFFLINE") {
		t.Fatalf("a refused download was cached: %v", err)
	}
	// Cold offline cache, unpinned, missing file, missing revision.
	cold := &HF{Endpoint: srv.URL, Cache: t.TempDir(), Offline: true}
	if _, err := read(cold, uri, sha(files["data/test.csv"])); err == nil || !strings.Contains(err.Error(), "not in the cache") {
		t.Fatalf("cold offline: %v", err)
	}
	if _, err := read(h, uri, ""); err == nil || !strings.Contains(err.Error(), "no sha256 pin") {
		t.Fatalf("unpinned: %v", err)
	}
	if _, err := read(h, "hf://datasets/owner/name@abc123/none.csv", wrong); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing file: %v", err)
	}
	if sum, err := h.Hash(ctx, uri); err != nil || sum != sha(files["data/test.csv"]) {
		t.Fatalf("Hash: %s, %v", sum, err)
	}
}
