package datasource

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/glossobench/glossobench/scorers/dataset"
)

// A Hub dataset named by repository, configuration and split is the set of
// Parquet files the Hub keeps for that split. The Hub's dataset viewer
// converts every public dataset and commits the files to the branch
// refs/convert/parquet as CONFIG/SPLIT/NNNN.parquet (a split beyond 5 GB
// is converted in part, under CONFIG/partial-SPLIT); the datasets library
// reads that branch too. The Hub's /api/datasets/OWNER/NAME/parquet/CONFIG/
// SPLIT lists only the current export; the tree API lists a directory at
// any revision, with each LFS file's SHA-256, so the set is listed at the
// URI's revision: @~parquet (the branch) or one of its commits.
//
// The set is pinned by one SHA-256: that of its listing, one line
// "SHA256  PATH" per file in path order (sha256sum's format), which names
// every file and its bytes. The listing is cached as a blob like the
// files, so a pinned set is read from the cache without any request.

// setFile is one line of a set's listing.
type setFile struct {
	sum  string // SHA-256 of the file's bytes; "" until known
	path string // inside the repository
}

func listing(files []setFile) []byte {
	var b bytes.Buffer
	for _, f := range files {
		fmt.Fprintf(&b, "%s  %s\n", f.sum, f.path)
	}
	return b.Bytes()
}

var listingLine = regexp.MustCompile(`^([0-9a-f]{64})  (\S.*)$`)

func parseListing(b []byte) ([]setFile, error) {
	var files []setFile
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		m := listingLine.FindStringSubmatch(sc.Text())
		if m == nil {
			return nil, fmt.Errorf("not a set listing: %q", sc.Text())
		}
		files = append(files, setFile{sum: m[1], path: m[2]})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("an empty set listing")
	}
	return files, sc.Err()
}

// OpenSet is the opener of a dataset named by configuration and split:
// the local files of the set pin names, fetched first where the cache
// lacks them. pin is required; without one the set is fetched and the
// error gives the value to paste.
func (h *HF) OpenSet(ctx context.Context, uri, config, split, pin string) ([]dataset.SetFile, error) {
	files, sum, err := h.FetchSet(ctx, uri, config, split, strings.ToLower(pin))
	if err != nil {
		return nil, err
	}
	if pin == "" {
		return nil, fmt.Errorf("dataset %s/%s/%s (config %s, split %s): no sha256 pin in the config; its %d Parquet file(s) hash to %s as a set: add  sha256: %s  to the entry", strings.TrimSuffix(uri, "/"), config, split, config, split, len(files), sum, sum)
	}
	return files, nil
}

// FetchSet makes sure the cache holds the Parquet files of uri's
// configuration and split and returns them in order with the set's
// SHA-256. With a pin whose listing the cache holds, nothing is requested
// but what the cache lacks; a set whose hash differs from the pin is
// refused, before any file is downloaded when the Hub names every file's
// SHA-256.
func (h *HF) FetchSet(ctx context.Context, uri, config, split, pin string) ([]dataset.SetFile, string, error) {
	p, err := dataset.ParseHFRepo(uri)
	if err != nil {
		return nil, "", err
	}
	if config == "" || split == "" || strings.Contains(config+"/"+split, "..") || strings.Contains(config+split, "/") {
		return nil, "", fmt.Errorf("%s: config %q and split %q: want both, each one path segment", uri, config, split)
	}
	// Errors name the set as dataset.Source.Path does, so a caller can
	// tell which entry's set it is.
	base := strings.TrimSuffix(uri, "/")
	what := fmt.Sprintf("dataset %s/%s/%s (config %s, split %s)", base, config, split, config, split)
	dir, err := h.cache()
	if err != nil {
		return nil, "", err
	}
	blobs := filepath.Join(dir, "sha256")
	if pin != "" {
		cached := filepath.Join(blobs, pin)
		if ok, err := fileHasHash(cached, pin); err != nil {
			return nil, "", err
		} else if ok {
			b, err := os.ReadFile(cached)
			if err != nil {
				return nil, "", err
			}
			files, err := parseListing(b)
			if err != nil {
				return nil, "", fmt.Errorf("%s: the cached blob %s: %w", what, cached, err)
			}
			out, err := h.fetchSetFiles(ctx, base, p, files)
			return out, pin, err
		}
	}
	if h.Offline {
		return nil, "", fmt.Errorf("%s: the set's listing is not in the cache %s and HF_HUB_OFFLINE=1 (glossobench fetch-dataset fetches it)", what, blobs)
	}
	files, err := h.listSplit(ctx, p, config, split, what)
	if err != nil {
		return nil, "", err
	}
	known := true
	for _, f := range files {
		known = known && f.sum != ""
	}
	if known && pin != "" {
		if sum := dataset.SHA256Hex(listing(files)); sum != pin {
			return nil, "", fmt.Errorf("%s: its Parquet files at %s hash to %s as a set, the config pins %s: the Hub's export changed or the pin is another set's (glossobench fetch-dataset prints the set)", what, p.Revision, sum, pin)
		}
	}
	out, err := h.fetchSetFiles(ctx, base, p, files)
	if err != nil {
		return nil, "", err
	}
	for i := range files {
		files[i].sum = filepath.Base(out[i].Path)
	}
	b := listing(files)
	sum := dataset.SHA256Hex(b)
	if pin != "" && sum != pin {
		return nil, "", fmt.Errorf("%s: its Parquet files at %s hash to %s as a set, the config pins %s: the Hub's export changed or the pin is another set's (glossobench fetch-dataset prints the set)", what, p.Revision, sum, pin)
	}
	if err := writeBlob(blobs, sum, b); err != nil {
		return nil, "", err
	}
	return out, sum, nil
}

// fetchSetFiles fetches (or finds in the cache) each file, pinned by its
// SHA-256 where known; each is named base/PATH, the repository URI as
// written and the file's path.
func (h *HF) fetchSetFiles(ctx context.Context, base string, p dataset.HFPath, files []setFile) ([]dataset.SetFile, error) {
	out := make([]dataset.SetFile, len(files))
	for i, f := range files {
		fp := p
		fp.File = f.path
		name := base + "/" + f.path
		local, err := h.fetch(ctx, name, fp, f.sum)
		if err != nil {
			return nil, err
		}
		out[i] = dataset.SetFile{Name: name, Path: local}
	}
	return out, nil
}

func writeBlob(dir, sum string, b []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".part-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, sum))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// treeEntry is an entry of the Hub's tree API (huggingface_hub's
// list_repo_tree reads the same fields).
type treeEntry struct {
	Type string `json:"type"`
	Path string `json:"path"`
	LFS  *struct {
		OID string `json:"oid"`
	} `json:"lfs"`
}

var nextLink = regexp.MustCompile(`<([^>]+)>\s*;\s*rel="next"`)

// listSplit lists the Parquet files under CONFIG/SPLIT at p's revision,
// following the tree API's pages (Link: <...>; rel="next").
func (h *HF) listSplit(ctx context.Context, p dataset.HFPath, config, split, what string) ([]setFile, error) {
	client := h.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Minute}
	}
	next := fmt.Sprintf("%s/api/datasets/%s/tree/%s/%s/%s", h.endpoint(), p.Repo, url.PathEscape(p.Revision), url.PathEscape(config), url.PathEscape(split))
	var files []setFile
	for pages := 0; next != ""; pages++ {
		if pages == 1000 {
			return nil, fmt.Errorf("%s: the listing has more than 1000 pages", what)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		if err != nil {
			return nil, err
		}
		if h.Token != "" && strings.HasPrefix(next, h.endpoint()+"/") {
			req.Header.Set("Authorization", "Bearer "+h.Token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		var page []treeEntry
		if resp.StatusCode == http.StatusOK {
			err = json.NewDecoder(resp.Body).Decode(&page)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("%s: %s answered 404: no %s/%s at revision %s; the Hub's Parquet files are on %s (@~parquet or a commit of that branch; a split over 5 GB is converted in part, as split partial-%s)", what, next, config, split, p.Revision, dataset.ParquetBranch, split)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s answered %s", what, next, resp.Status)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: not a tree listing: %w", what, next, err)
		}
		for _, e := range page {
			if e.Type != "file" || !strings.HasSuffix(e.Path, ".parquet") {
				continue
			}
			if !strings.HasPrefix(e.Path, config+"/"+split+"/") || strings.Contains(e.Path, "..") {
				return nil, fmt.Errorf("%s: the listing names %q, outside %s/%s", what, e.Path, config, split)
			}
			f := setFile{path: e.Path}
			if e.LFS != nil {
				f.sum = etagHash(e.LFS.OID)
			}
			files = append(files, f)
		}
		next = ""
		if m := nextLink.FindStringSubmatch(resp.Header.Get("Link")); m != nil {
			next = m[1]
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no Parquet files under %s/%s at revision %s", what, config, split, p.Revision)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, nil
}
