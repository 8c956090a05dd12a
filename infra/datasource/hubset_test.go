package datasource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/glossobench/glossobench/scorers/dataset"
)

// FakeHub mimics the Hub's endpoints a dataset named by configuration and
// split uses: the tree API (one entry per page, so the Link header's next
// page is followed; each file's SHA-256 as its LFS oid), and resolve URLs
// that answer 302 to a CDN host with X-Linked-Etag, the CDN answering
// with an ETag. Files maps a path on refs/convert/parquet to its bytes.
type fakeHub struct {
	srv              *httptest.Server
	files            map[string][]byte
	listed, resolved atomic.Int32
	cdn              atomic.Int32
}

const parquetRev = "refs%2Fconvert%2Fparquet"

func newFakeHub(t *testing.T, files map[string][]byte) *fakeHub {
	t.Helper()
	h := &fakeHub{files: files}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/datasets/", func(w http.ResponseWriter, r *http.Request) {
		h.listed.Add(1)
		dir, ok := strings.CutPrefix(r.URL.EscapedPath(), "/api/datasets/owner/name/tree/"+parquetRev+"/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		var paths []string
		for p := range h.files {
			if strings.HasPrefix(p, dir+"/") {
				paths = append(paths, p)
			}
		}
		if len(paths) == 0 {
			http.Error(w, `{"error":"Entry not found"}`, http.StatusNotFound)
			return
		}
		sort.Strings(paths)
		page := 0
		fmt.Sscan(r.URL.Query().Get("cursor"), &page)
		if page+1 < len(paths) {
			w.Header().Set("Link", fmt.Sprintf(`<%s%s?cursor=%d>; rel="next"`, h.srv.URL, r.URL.EscapedPath(), page+1))
		}
		p := paths[page]
		json.NewEncoder(w).Encode([]map[string]any{{"type": "file", "path": p, "oid": "0123456789abcdef0123456789abcdef01234567", "size": len(h.files[p]),
			"lfs": map[string]any{"oid": dataset.SHA256Hex(h.files[p]), "size": len(h.files[p]), "pointerSize": 134}}})
	})
	mux.HandleFunc("/datasets/", func(w http.ResponseWriter, r *http.Request) {
		h.resolved.Add(1)
		p, ok := strings.CutPrefix(r.URL.EscapedPath(), "/datasets/owner/name/resolve/"+parquetRev+"/")
		body, found := h.files[p]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		_, port, _ := strings.Cut(r.Host, ":")
		w.Header().Set("X-Linked-Etag", `"`+dataset.SHA256Hex(body)+`"`)
		w.Header().Set("Location", "http://localhost:"+port+"/cdn/"+p)
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/cdn/", func(w http.ResponseWriter, r *http.Request) {
		h.cdn.Add(1)
		body := h.files[strings.TrimPrefix(r.URL.Path, "/cdn/")]
		w.Header().Set("ETag", `"`+dataset.SHA256Hex(body)+`"`)
		w.Write(body)
	})
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	return h
}

func (h *fakeHub) requests() int32 { return h.listed.Load() + h.resolved.Load() + h.cdn.Load() }

type qrow struct {
	Question string `parquet:"question"`
	Answer   int64  `parquet:"answer"`
}

func parquetOf(t *testing.T, rows ...qrow) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := parquet.Write(&b, rows); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// setPin is the set's SHA-256 as the package defines it, computed here
// from the definition: "SHA256  PATH\n" per file in path order.
func setPin(files map[string][]byte, prefix string) string {
	var paths []string
	for p := range files {
		if strings.HasPrefix(p, prefix) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(dataset.SHA256Hex(files[p]) + "  " + p + "\n")
	}
	return dataset.SHA256Hex([]byte(b.String()))
}

func readSet(t *testing.T, h *HF, uri, config, split, pin string) ([]string, []int, error) {
	t.Helper()
	t.Setenv("HF_ENDPOINT", h.Endpoint)
	t.Setenv("GLOSSOBENCH_HF_CACHE", h.Cache)
	t.Setenv("HF_TOKEN", h.Token)
	off := ""
	if h.Offline {
		off = "1"
	}
	t.Setenv("HF_HUB_OFFLINE", off)
	var qs []string
	var lines []int
	src := dataset.Source{URI: uri, Config: config, Split: split, SHA256: pin}
	err := dataset.Each(context.Background(), src, nil, func(r dataset.Row) error {
		qs = append(qs, fmt.Sprint(r.Fields["question"]))
		lines = append(lines, r.Line)
		return nil
	})
	return qs, lines, err
}

func TestHubDatasetByConfigAndSplit(t *testing.T) {
	files := map[string][]byte{
		"zsm_Latn/test/0000.parquet":  parquetOf(t, qrow{"s1", 0}, qrow{"s2", 1}),
		"zsm_Latn/test/0001.parquet":  parquetOf(t, qrow{"s3", 2}),
		"zsm_Latn/train/0000.parquet": parquetOf(t, qrow{"t1", 0}),
	}
	hub := newFakeHub(t, files)
	pin := setPin(files, "zsm_Latn/test/")
	cache := t.TempDir()
	h := &HF{Endpoint: hub.srv.URL, Cache: cache}
	uri := "hf://datasets/owner/name@~parquet"

	// Unpinned: fetched, then refused with the value to paste.
	if _, _, err := readSet(t, h, uri, "zsm_Latn", "test", ""); err == nil || !strings.Contains(err.Error(), "sha256: "+pin) || !strings.Contains(err.Error(), "owner/name") {
		t.Fatalf("unpinned: %v", err)
	}
	// 2 listing pages, 2 resolves, 2 CDN downloads.
	if got := hub.requests(); got != 6 {
		t.Fatalf("the first fetch made %d requests, want 6", got)
	}
	// Pinned: read from the cache with no request, the files in order as
	// one table, rows numbered across files.
	qs, lines, err := readSet(t, h, "hf://datasets/owner/name@"+parquetRev, "zsm_Latn", "test", pin)
	if err != nil || strings.Join(qs, ",") != "s1,s2,s3" || fmt.Sprint(lines) != "[1 2 3]" {
		t.Fatalf("pinned read: %v %v %v", qs, lines, err)
	}
	if got := hub.requests(); got != 6 {
		t.Fatalf("a pinned warm read made %d requests", got-6)
	}
	// Offline with the server stopped.
	hub.srv.Close()
	off := &HF{Endpoint: "http://127.0.0.1:1", Cache: cache, Offline: true}
	if qs, _, err := readSet(t, off, uri, "zsm_Latn", "test", pin); err != nil || strings.Join(qs, ",") != "s1,s2,s3" {
		t.Fatalf("offline warm read: %v %v", qs, err)
	}
	// Offline, a set not in the cache.
	if _, _, err := readSet(t, off, uri, "zsm_Latn", "train", setPin(files, "zsm_Latn/train/")); err == nil || !strings.Contains(err.Error(), "HF_HUB_OFFLINE") {
		t.Fatalf("cold offline: %v", err)
	}
}

func TestHubDatasetPinMismatch(t *testing.T) {
	files := map[string][]byte{"cfg/test/0000.parquet": parquetOf(t, qrow{"a", 0})}
	hub := newFakeHub(t, files)
	pin := setPin(files, "cfg/test/")
	h := &HF{Endpoint: hub.srv.URL, Cache: t.TempDir()}
	uri := "hf://datasets/owner/name@~parquet"
	// The export was re-made: the set no longer matches its pin; refused
	// naming the dataset, before any file is downloaded.
	files["cfg/test/0000.parquet"] = parquetOf(t, qrow{"a changed", 0})
	_, _, err := readSet(t, h, uri, "cfg", "test", pin)
	if err == nil || !strings.Contains(err.Error(), "dataset "+uri+" config cfg split test") || !strings.Contains(err.Error(), "the config pins "+pin) {
		t.Fatalf("changed set: %v", err)
	}
	if hub.cdn.Load() != 0 || hub.resolved.Load() != 0 {
		t.Fatalf("a refused set was downloaded (%d resolves, %d CDN)", hub.resolved.Load(), hub.cdn.Load())
	}
	// A split the export lacks names the branch to use.
	if _, _, err := readSet(t, h, uri, "cfg", "validation", pin); err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "partial-validation") {
		t.Fatalf("missing split: %v", err)
	}
	// A main-branch revision has no CONFIG/SPLIT directory.
	if _, _, err := readSet(t, h, "hf://datasets/owner/name@main", "cfg", "test", pin); err == nil || !strings.Contains(err.Error(), dataset.ParquetBranch) {
		t.Fatalf("main: %v", err)
	}
	// A source that is several files cannot be opened as one stream.
	if _, err := dataset.Open(context.Background(), dataset.Source{URI: uri, Config: "cfg", Split: "test", SHA256: pin}); err == nil || !strings.Contains(err.Error(), "not as one stream") {
		t.Fatalf("Open on a set: %v", err)
	}
}
