// Package hubtest is a stand-in for the Hugging Face Hub in tests: the
// endpoints a dataset named by configuration and split goes through.
package hubtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Rev is the revision the Hub serves: the branch of its Parquet export,
// as a URL path spells it.
const Rev = "refs%2Fconvert%2Fparquet"

// Hub mimics the Hub for one repository: the tree API (one entry per
// page, so a client must follow the Link header's next page; each file's
// SHA-256 as its LFS oid, as the Hub gives it), resolve URLs answering 302
// to a CDN on another host name with X-Linked-Etag, and the CDN answering
// with the bytes and an ETag. Only Rev is served.
type Hub struct {
	URL  string
	Repo string
	srv  *httptest.Server

	mu    sync.Mutex
	files map[string][]byte // path on Rev -> bytes

	Listed, Resolved, CDN atomic.Int32
}

// New starts a Hub serving files (path on refs/convert/parquet to bytes)
// of repo; it stops when the test ends.
func New(t testing.TB, repo string, files map[string][]byte) *Hub {
	t.Helper()
	h := &Hub{Repo: repo, files: map[string][]byte{}}
	for p, b := range files {
		h.files[p] = b
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/datasets/", h.tree)
	mux.HandleFunc("/datasets/", h.resolve)
	mux.HandleFunc("/cdn/", func(w http.ResponseWriter, r *http.Request) {
		h.CDN.Add(1)
		body, ok := h.file(strings.TrimPrefix(r.URL.Path, "/cdn/"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"`+sum(body)+`"`)
		w.Write(body)
	})
	h.srv = httptest.NewServer(mux)
	h.URL = h.srv.URL
	t.Cleanup(h.srv.Close)
	return h
}

// Close stops the server (a test of the offline cache).
func (h *Hub) Close() { h.srv.Close() }

// Set replaces a file's bytes (a new export).
func (h *Hub) Set(path string, b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files[path] = b
}

// Requests counts every request served.
func (h *Hub) Requests() int32 { return h.Listed.Load() + h.Resolved.Load() + h.CDN.Load() }

func (h *Hub) file(p string) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.files[p]
	return b, ok
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func (h *Hub) tree(w http.ResponseWriter, r *http.Request) {
	h.Listed.Add(1)
	dir, ok := strings.CutPrefix(r.URL.EscapedPath(), "/api/datasets/"+h.Repo+"/tree/"+Rev+"/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.mu.Lock()
	var paths []string
	for p := range h.files {
		if strings.HasPrefix(p, dir+"/") {
			paths = append(paths, p)
		}
	}
	h.mu.Unlock()
	if len(paths) == 0 {
		http.Error(w, `{"error":"Entry not found"}`, http.StatusNotFound)
		return
	}
	sort.Strings(paths)
	page := 0
	fmt.Sscan(r.URL.Query().Get("cursor"), &page)
	if page >= len(paths) {
		http.Error(w, "bad cursor", http.StatusBadRequest)
		return
	}
	if page+1 < len(paths) {
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?cursor=%d>; rel="next"`, h.URL, r.URL.EscapedPath(), page+1))
	}
	p := paths[page]
	body, _ := h.file(p)
	json.NewEncoder(w).Encode([]map[string]any{{"type": "file", "path": p, "oid": "0123456789abcdef0123456789abcdef01234567", "size": len(body),
		"lfs": map[string]any{"oid": sum(body), "size": len(body), "pointerSize": 134}}})
}

func (h *Hub) resolve(w http.ResponseWriter, r *http.Request) {
	h.Resolved.Add(1)
	p, ok := strings.CutPrefix(r.URL.EscapedPath(), "/datasets/"+h.Repo+"/resolve/"+Rev+"/")
	body, found := h.file(p)
	if !ok || !found {
		http.NotFound(w, r)
		return
	}
	_, port, _ := strings.Cut(r.Host, ":")
	w.Header().Set("X-Linked-Etag", `"`+sum(body)+`"`)
	w.Header().Set("Location", "http://localhost:"+port+"/cdn/"+p) // the CDN: another host name
	w.WriteHeader(http.StatusFound)
}

// SetPin is a set's SHA-256 computed from its definition (package
// datasource): one line "SHA256  PATH" per file under dir, in path order.
func SetPin(files map[string][]byte, dir string) string {
	var paths []string
	for p := range files {
		if strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/") {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(sum(files[p]) + "  " + p + "\n")
	}
	return sum([]byte(b.String()))
}
