// Package storetest holds the conformance suite every store.Store must pass,
// and the helper that connects tests to a live S3-compatible server.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glossobench/glossobench/infra/store"
)

// Environment variables naming a live S3-compatible server for tests. CI sets
// them after .ci/versitygw.sh start; AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY carry the credentials through the SDK's default chain.
const (
	EnvEndpoint = "GLOSSOBENCH_S3_ENDPOINT"
	EnvBucket   = "GLOSSOBENCH_S3_BUCKET"
)

// S3Config returns the live server's configuration with a fresh prefix, or
// skips the test when the environment does not name a server.
func S3Config(t testing.TB) store.S3Config {
	t.Helper()
	endpoint, bucket := os.Getenv(EnvEndpoint), os.Getenv(EnvBucket)
	if endpoint == "" || bucket == "" {
		t.Skipf("no live S3 server: set %s and %s (see .ci/versitygw.sh)", EnvEndpoint, EnvBucket)
	}
	// A fresh prefix per test keeps runs apart in a shared bucket.
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return store.S3Config{
		Endpoint:  endpoint,
		Bucket:    bucket,
		Prefix:    fmt.Sprintf("test/%s-%d-%s", name, time.Now().UnixNano(), rand.Text()[:6]),
		Region:    "us-east-1",
		PathStyle: true,
	}
}

// S3 returns a store on the live server under a fresh prefix, creating the
// bucket if needed, or skips the test when no server is configured.
func S3(t testing.TB) *store.S3 {
	t.Helper()
	return OpenS3(t, S3Config(t))
}

// OpenS3 returns the store cfg (from S3Config) names, creating the bucket
// if needed; the tests that also name its objects by s3:// URI read the
// bucket, prefix and endpoint from cfg.
func OpenS3(t testing.TB, cfg store.S3Config) *store.S3 {
	t.Helper()
	s, err := store.NewS3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// Run runs the conformance suite. newStore must return an empty store each
// time it is called.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, st store.Store)
	}{
		{"PutGet", testPutGet},
		{"CreateOnly", testCreateOnly},
		{"ConcurrentPut", testConcurrentPut},
		{"NotFound", testNotFound},
		{"List", testList},
		{"InvalidKeys", testInvalidKeys},
		{"CanceledContext", testCanceledContext},
		{"PutFileOpen", testPutFileOpen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newStore(t)) })
	}
}

func testPutGet(t *testing.T, st store.Store) {
	ctx := context.Background()
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	objects := map[string][]byte{
		"empty":                         {},
		"runs/r1/shard-0001.jsonl":      []byte("{\"id\":1}\n{\"id\":2}\n"),
		"binary/nul":                    {0, 1, 2, 0, 255},
		"unicode/ayam-goreng/é.json":    []byte(`"ok"`),
		"spaces and+plus/key=v&x?y.txt": []byte("odd characters"),
		"big/1MiB":                      big,
	}
	for key, data := range objects {
		if ok, err := st.Exists(ctx, key); err != nil || ok {
			t.Fatalf("Exists(%q) before Put = %v, %v; want false, nil", key, ok, err)
		}
		if err := st.Put(ctx, key, data); err != nil {
			t.Fatalf("Put(%q): %v", key, err)
		}
	}
	for key, want := range objects {
		got, err := st.Get(ctx, key)
		if err != nil {
			t.Fatalf("Get(%q): %v", key, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Get(%q) = %d bytes, want the %d bytes put", key, len(got), len(want))
		}
		if ok, err := st.Exists(ctx, key); err != nil || !ok {
			t.Errorf("Exists(%q) = %v, %v; want true, nil", key, ok, err)
		}
	}
	if d := st.Describe(); d == "" {
		t.Error("Describe() is empty")
	}
}

func testCreateOnly(t *testing.T, st store.Store) {
	ctx := context.Background()
	key := "ckpt/shard-0007.jsonl"
	if err := st.Put(ctx, key, []byte("first")); err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{[]byte("second"), []byte("first"), {}} {
		err := st.Put(ctx, key, data)
		if !errors.Is(err, store.ErrExists) {
			t.Fatalf("second Put(%q, %q) = %v, want ErrExists", key, data, err)
		}
		if !strings.Contains(err.Error(), key) {
			t.Errorf("error %q does not name the key %q", err, key)
		}
	}
	got, err := st.Get(ctx, key)
	if err != nil || string(got) != "first" {
		t.Fatalf("after refused overwrites Get = %q, %v; want %q", got, err, "first")
	}
}

// testConcurrentPut races writers on one key: exactly one must win, the
// others must see ErrExists, and the object must hold the winner's bytes.
func testConcurrentPut(t *testing.T, st store.Store) {
	ctx := context.Background()
	const writers = 8
	for round := range 5 {
		key := fmt.Sprintf("race/round-%d", round)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range writers {
			wg.Go(func() {
				<-start
				errs[w] = st.Put(ctx, key, fmt.Appendf(nil, "writer %d", w))
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won key %q", round, winner, w, key)
				}
				winner = w
			case !errors.Is(err, store.ErrExists):
				t.Fatalf("round %d: writer %d: %v, want nil or ErrExists", round, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won key %q", round, key)
		}
		got, err := st.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("writer %d", winner); string(got) != want {
			t.Fatalf("round %d: object holds %q, want the winner's %q", round, got, want)
		}
	}
}

// testPutFileOpen stores a file larger than any buffer with PutFile, reads
// it back through Open, and checks that both keep Put's and Get's contracts:
// create-only, and ErrNotFound naming the key.
func testPutFileOpen(t *testing.T, st store.Store) {
	ctx := context.Background()
	data := make([]byte, 3<<20+17)
	for i := range data {
		data[i] = byte(i*31 + i>>11)
	}
	path := filepath.Join(t.TempDir(), "spool")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	key := "runs/r/knowledge/scores.jsonl"
	if err := st.PutFile(ctx, key, path); err != nil {
		t.Fatalf("PutFile(%q): %v", key, err)
	}
	// Other bytes under the same key are refused. (The same bytes again may
	// count as success on S3: a server that answers 412 before reading a
	// large body makes the client retry, and a retried create-only write
	// that finds identical bytes takes them for its own.)
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, data[:len(data)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := st.PutFile(ctx, key, other); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second PutFile(%q) of other bytes = %v, want ErrExists", key, err)
	}
	if err := st.PutFile(ctx, "runs/r/other", filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Fatal("PutFile of a missing file succeeded")
	}
	r, err := st.Open(ctx, key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Open(%q) read %d bytes (%v), want the %d bytes of the file", key, len(got), err, len(data))
	}
	for _, k := range []string{"runs/r/absent", "runs/r", "runs/r/knowledge"} {
		if _, err := st.Open(ctx, k); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), k) {
			t.Errorf("Open(%q) = %v, want ErrNotFound naming the key", k, err)
		}
	}
	if _, err := st.Open(ctx, "../escape"); err == nil {
		t.Error("Open of an invalid key succeeded")
	}
}

func testNotFound(t *testing.T, st store.Store) {
	ctx := context.Background()
	if err := st.Put(ctx, "dir/present", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// "dir" is a prefix, not an object; "dir/present/x" lies under an object.
	for _, key := range []string{"absent", "dir/absent", "dir", "dir/present/x", "dir/pres"} {
		_, err := st.Get(ctx, key)
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", key, err)
			continue
		}
		if !strings.Contains(err.Error(), key) {
			t.Errorf("error %q does not name the key %q", err, key)
		}
		if ok, err := st.Exists(ctx, key); err != nil || ok {
			t.Errorf("Exists(%q) = %v, %v; want false, nil", key, ok, err)
		}
	}
}

func testList(t *testing.T, st store.Store) {
	ctx := context.Background()
	// No key is also a prefix directory of another, which a local store
	// could not hold; otherwise the names probe bytewise ordering around '/'.
	keys := []string{
		"runs/r1/shard-0002.jsonl",
		"runs/r1/shard-0001.jsonl",
		"runs/r1/sub/deep/z",
		"runs/r1-x/a",
		"runs/r10/a",
		"runs/r2/a",
		"runs-a",
		"runs.txt",
		"other/k",
		"Runs/upper",
	}
	for _, k := range keys {
		if err := st.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	all := slices.Clone(keys)
	slices.Sort(all)
	for _, prefix := range []string{"", "runs/", "runs", "runs/r1", "runs/r1/", "runs/r1/shard-000", "runs/r1/sub/", "nope/", "nope", "runs/r3", "o", "R"} {
		got, err := st.List(ctx, prefix)
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		var want []string
		for _, k := range all {
			if strings.HasPrefix(k, prefix) {
				want = append(want, k)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, want %q", prefix, got, want)
		}
	}
}

var badKeys = []string{
	"",
	"/abs",
	"/",
	"..",
	"../escape",
	"a/../../escape",
	"a/..",
	"./a",
	"a/./b",
	"a//b",
	"a/",
	"back\\slash",
	"..\\escape",
	"nul\x00byte",
	"new\nline",
	"bad-utf8-\xff",
	".tmp-reserved",
	"a/.tmp-reserved",
	strings.Repeat("k", store.MaxKeyLen+1),
}

func testInvalidKeys(t *testing.T, st store.Store) {
	ctx := context.Background()
	for _, key := range badKeys {
		if err := store.ValidKey(key); err == nil {
			t.Errorf("ValidKey(%q) = nil, want an error", key)
		}
		if err := st.Put(ctx, key, []byte("x")); err == nil || errors.Is(err, store.ErrExists) {
			t.Errorf("Put(%q) = %v, want a key error", key, err)
		}
		if _, err := st.Get(ctx, key); err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want a key error", key, err)
		}
		if _, err := st.Exists(ctx, key); err == nil {
			t.Errorf("Exists(%q) = nil error, want a key error", key)
		}
	}
	for _, prefix := range []string{"/abs", "../", "a/../", "a//", "x\\", "nul\x00"} {
		if _, err := st.List(ctx, prefix); err == nil {
			t.Errorf("List(%q) = nil error, want a prefix error", prefix)
		}
	}
	if keys, err := st.List(ctx, ""); err != nil || len(keys) != 0 {
		t.Errorf("after refused writes List(\"\") = %q, %v; want nothing stored", keys, err)
	}
}

func testCanceledContext(t *testing.T, st store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := st.Put(ctx, "canceled", []byte("x")); err == nil {
		t.Error("Put with a canceled context succeeded")
	}
	if ok, err := st.Exists(context.Background(), "canceled"); err != nil || ok {
		t.Errorf("Exists after canceled Put = %v, %v; want false, nil", ok, err)
	}
}
