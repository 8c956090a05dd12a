package datasource

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/glossobench/glossobench/infra/datasource/hubtest"
	"github.com/glossobench/glossobench/scorers/dataset"
)

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
	hub := hubtest.New(t, "owner/name", files)
	pin := hubtest.SetPin(files, "zsm_Latn/test/")
	cache := t.TempDir()
	h := &HF{Endpoint: hub.URL, Cache: cache}
	uri := "hf://datasets/owner/name@~parquet"

	// Unpinned: fetched, then refused with the value to paste.
	if _, _, err := readSet(t, h, uri, "zsm_Latn", "test", ""); err == nil || !strings.Contains(err.Error(), "sha256: "+pin) || !strings.Contains(err.Error(), "owner/name") {
		t.Fatalf("unpinned: %v", err)
	}
	// 2 listing pages, 2 resolves, 2 CDN downloads.
	if got := hub.Requests(); got != 6 {
		t.Fatalf("the first fetch made %d requests, want 6", got)
	}
	// Pinned: read from the cache with no request, the files in order as
	// one table, rows numbered across files.
	qs, lines, err := readSet(t, h, "hf://datasets/owner/name@"+hubtest.Rev, "zsm_Latn", "test", pin)
	if err != nil || strings.Join(qs, ",") != "s1,s2,s3" || fmt.Sprint(lines) != "[1 2 3]" {
		t.Fatalf("pinned read: %v %v %v", qs, lines, err)
	}
	if got := hub.Requests(); got != 6 {
		t.Fatalf("a pinned warm read made %d requests", got-6)
	}
	// Offline with the server stopped.
	hub.Close()
	off := &HF{Endpoint: "http://127.0.0.1:1", Cache: cache, Offline: true}
	if qs, _, err := readSet(t, off, uri, "zsm_Latn", "test", pin); err != nil || strings.Join(qs, ",") != "s1,s2,s3" {
		t.Fatalf("offline warm read: %v %v", qs, err)
	}
	// Offline, a set not in the cache.
	if _, _, err := readSet(t, off, uri, "zsm_Latn", "train", hubtest.SetPin(files, "zsm_Latn/train/")); err == nil || !strings.Contains(err.Error(), "HF_HUB_OFFLINE") {
		t.Fatalf("cold offline: %v", err)
	}
}

func TestHubDatasetPinMismatch(t *testing.T) {
	files := map[string][]byte{"cfg/test/0000.parquet": parquetOf(t, qrow{"a", 0})}
	hub := hubtest.New(t, "owner/name", files)
	pin := hubtest.SetPin(files, "cfg/test/")
	h := &HF{Endpoint: hub.URL, Cache: t.TempDir()}
	uri := "hf://datasets/owner/name@~parquet"
	// The export was re-made: the set no longer matches its pin; refused
	// naming the dataset, before any file is downloaded.
	hub.Set("cfg/test/0000.parquet", parquetOf(t, qrow{"a changed", 0}))
	_, _, err := readSet(t, h, uri, "cfg", "test", pin)
	if err == nil || !strings.Contains(err.Error(), "dataset "+uri+"/cfg/test (config cfg, split test)") || !strings.Contains(err.Error(), "the config pins "+pin) {
		t.Fatalf("changed set: %v", err)
	}
	if hub.CDN.Load() != 0 || hub.Resolved.Load() != 0 {
		t.Fatalf("a refused set was downloaded (%d resolves, %d CDN)", hub.Resolved.Load(), hub.CDN.Load())
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
	// A file of the set that does not read is named as the set's file.
	bad := map[string][]byte{"cfg/test/0000.parquet": parquetOf(t, qrow{"a", 0}), "cfg/test/0001.parquet": []byte("not parquet")}
	hub2 := hubtest.New(t, "owner/name", bad)
	h2 := &HF{Endpoint: hub2.URL, Cache: t.TempDir()}
	if _, _, err := readSet(t, h2, uri, "cfg", "test", hubtest.SetPin(bad, "cfg/test")); err == nil || !strings.Contains(err.Error(), uri+"/cfg/test/0001.parquet") {
		t.Fatalf("a bad file of the set: %v", err)
	}
}

// TestHFRevisionEscapedOnce: a single file on the export branch, its
// revision written as huggingface_hub spells it, resolves at
// refs%2Fconvert%2Fparquet (it was escaped twice, %252F, and 404ed).
func TestHFRevisionEscapedOnce(t *testing.T) {
	files := map[string][]byte{"cfg/test/0000.parquet": []byte("PAR1 bytes")}
	hub := hubtest.New(t, "owner/name", files)
	h := &HF{Endpoint: hub.URL, Cache: t.TempDir()}
	for _, rev := range []string{hubtest.Rev, "~parquet"} {
		rc, err := h.Open(context.Background(), "hf://datasets/owner/name@"+rev+"/cfg/test/0000.parquet", dataset.SHA256Hex(files["cfg/test/0000.parquet"]))
		if err != nil {
			t.Fatalf("@%s: %v", rev, err)
		}
		rc.Close()
	}
}
