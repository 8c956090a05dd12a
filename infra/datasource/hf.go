package datasource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/glossobench/glossobench/scorers/dataset"
)

// HF fetches dataset files from the Hugging Face Hub (or a server speaking
// its resolve URLs) into a content-addressed cache: a file is stored as
// <Cache>/sha256/<hex> and, once there and matching its pin, is read from
// disk without any request.
type HF struct {
	Endpoint string // default https://huggingface.co (env HF_ENDPOINT)
	Cache    string // default $GLOSSOBENCH_HF_CACHE, else <user cache>/glossobench/hf
	// Token is sent as a bearer token to the endpoint only (env HF_TOKEN);
	// it is never logged or written anywhere.
	Token   string
	Offline bool // no network at all (env HF_HUB_OFFLINE=1): a cold cache is an error
	Client  *http.Client
}

// DefaultHF is an HF configured from the environment.
func DefaultHF() *HF {
	h := &HF{Endpoint: os.Getenv("HF_ENDPOINT"), Cache: os.Getenv("GLOSSOBENCH_HF_CACHE"), Token: os.Getenv("HF_TOKEN")}
	h.Offline = os.Getenv("HF_HUB_OFFLINE") == "1"
	return h
}

func (h *HF) endpoint() string {
	if h.Endpoint != "" {
		return strings.TrimSuffix(h.Endpoint, "/")
	}
	return "https://huggingface.co"
}

func (h *HF) cache() (string, error) {
	if h.Cache != "" {
		return h.Cache, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("hf cache: %w (set GLOSSOBENCH_HF_CACHE)", err)
	}
	return filepath.Join(d, "glossobench", "hf"), nil
}

// ResolveURL is the Hub's download URL of a file.
func (h *HF) ResolveURL(p dataset.HFPath) string {
	esc := func(s string) string {
		parts := strings.Split(s, "/")
		for i := range parts {
			parts[i] = url.PathEscape(parts[i])
		}
		return strings.Join(parts, "/")
	}
	return fmt.Sprintf("%s/datasets/%s/resolve/%s/%s", h.endpoint(), esc(p.Repo), url.PathEscape(p.Revision), esc(p.File))
}

var hexRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Open returns the cached file of uri, fetching it first when the cache
// does not hold bytes with the pinned SHA-256. pin is required.
func (h *HF) Open(ctx context.Context, uri, pin string) (io.ReadCloser, error) {
	if pin == "" {
		return nil, fmt.Errorf("%s: no sha256 pin in the config (glossobench fetch-dataset %s prints it)", uri, uri)
	}
	p, err := h.Fetch(ctx, uri, strings.ToLower(pin))
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

// Fetch makes sure the cache holds uri's file and returns its path. With a
// pin, a cached file of that hash is used as it is (no request); a download
// whose hash differs is refused and not kept. Without a pin the file is
// downloaded and cached under the hash it has (see Hash).
func (h *HF) Fetch(ctx context.Context, uri, pin string) (string, error) {
	p, err := dataset.ParseHF(uri)
	if err != nil {
		return "", err
	}
	return h.fetch(ctx, uri, p, pin)
}

func (h *HF) fetch(ctx context.Context, uri string, p dataset.HFPath, pin string) (string, error) {
	dir, err := h.cache()
	if err != nil {
		return "", err
	}
	blobs := filepath.Join(dir, "sha256")
	if pin != "" {
		cached := filepath.Join(blobs, pin)
		if ok, err := fileHasHash(cached, pin); err != nil {
			return "", err
		} else if ok {
			return cached, nil
		}
	}
	if h.Offline {
		return "", fmt.Errorf("%s: not in the cache %s and HF_HUB_OFFLINE=1", uri, blobs)
	}
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return "", err
	}
	got, tmp, err := h.download(ctx, uri, p, blobs, pin)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(blobs, got)
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return dst, nil
}

// Hash downloads (or finds in the cache) uri's file and returns its SHA-256,
// for pinning in a config.
func (h *HF) Hash(ctx context.Context, uri string) (string, error) {
	p, err := h.Fetch(ctx, uri, "")
	if err != nil {
		return "", err
	}
	return filepath.Base(p), nil
}

// download writes the file to a temporary file in dir and returns its hash.
func (h *HF) download(ctx context.Context, uri string, p dataset.HFPath, dir, pin string) (sum, tmp string, err error) {
	client := h.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Minute}
	}
	// The Hub answers a resolve URL of an LFS file with a redirect to its
	// CDN, and names the file's SHA-256 in X-Linked-Etag (ETag for a
	// file stored in git is its git blob id, not a SHA-256): a pin that
	// disagrees is refused before the body is fetched.
	linked := ""
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if r := req.Response; r != nil && linked == "" {
			linked = etagHash(r.Header.Get("X-Linked-Etag"))
		}
		if pin != "" && linked != "" && linked != pin {
			return http.ErrUseLastResponse // refused below, before the body is fetched
		}
		// The token goes to the Hub only, never to where it redirects.
		if req.URL.Host != via[0].URL.Host {
			req.Header.Del("Authorization")
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.ResolveURL(p), nil)
	if err != nil {
		return "", "", err
	}
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", uri, err)
	}
	defer resp.Body.Close()
	if pin != "" && linked != "" && linked != pin {
		return "", "", fmt.Errorf("%s: the Hub's file has sha256 %s (X-Linked-Etag), the config pins %s", uri, linked, pin)
	}
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("%s: %s answered %s", uri, h.ResolveURL(p), resp.Status)
	}
	if linked == "" {
		linked = etagHash(resp.Header.Get("X-Linked-Etag"))
	}
	if pin != "" && linked != "" && linked != pin {
		return "", "", fmt.Errorf("%s: the Hub's file has sha256 %s (X-Linked-Etag), the config pins %s", uri, linked, pin)
	}
	f, err := os.CreateTemp(dir, ".part-*")
	if err != nil {
		return "", "", err
	}
	hash := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, hash), resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", "", fmt.Errorf("%s: %w", uri, err)
	}
	sum = hex.EncodeToString(hash.Sum(nil))
	if pin != "" && sum != pin {
		os.Remove(f.Name())
		return "", "", fmt.Errorf("%s: downloaded file has sha256 %s, the config pins %s: the file changed", uri, sum, pin)
	}
	return sum, f.Name(), nil
}

// etagHash returns an ETag's value when it is a SHA-256, else "".
func etagHash(etag string) string {
	v := strings.Trim(strings.TrimPrefix(etag, "W/"), `"`)
	if hexRE.MatchString(v) {
		return v
	}
	return ""
}

func fileHasHash(path, want string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, err
	}
	return hex.EncodeToString(h.Sum(nil)) == want, nil
}
