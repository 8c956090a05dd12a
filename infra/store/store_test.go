package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/infra/store/storetest"
)

func TestLocalConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		st, err := store.NewLocal(filepath.Join(t.TempDir(), "store"))
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

// TestS3Conformance runs against a real S3-compatible server (versitygw in
// CI, see .ci/versitygw.sh); it skips when none is configured.
func TestS3Conformance(t *testing.T) {
	storetest.S3Config(t) // skip early without a server
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.S3(t) })
}

// TestS3PrefixIsolation checks that two stores in one bucket under different
// prefixes see only their own keys.
func TestS3PrefixIsolation(t *testing.T) {
	ctx := context.Background()
	a, b := storetest.S3(t), storetest.S3(t)
	if err := a.Put(ctx, "k", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, "k", []byte("b")); err != nil {
		t.Fatalf("same key under another prefix: %v", err)
	}
	keys, err := a.List(ctx, "")
	if err != nil || len(keys) != 1 || keys[0] != "k" {
		t.Fatalf("List = %q, %v; want [k]", keys, err)
	}
	// Describe round-trips through Open to the same place.
	c, err := store.Open(ctx, a.Describe())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, "k"); err != nil || string(got) != "a" {
		t.Fatalf("Get through Open(Describe()) = %q, %v; want a", got, err)
	}
}

// TestS3ErrorsHideSecrets uses wrong static credentials and checks that the
// resulting errors name the key but not the secret.
func TestS3ErrorsHideSecrets(t *testing.T) {
	cfg := storetest.S3Config(t)
	const secret = "not-the-secret-0123456789abcdef"
	t.Setenv("GLOSSOBENCH_TEST_AK", "wrong-access-key")
	t.Setenv("GLOSSOBENCH_TEST_SK", secret)
	cfg.AccessKeyEnv, cfg.SecretKeyEnv = "GLOSSOBENCH_TEST_AK", "GLOSSOBENCH_TEST_SK"
	st, err := store.NewS3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = st.Put(ctx, "denied/key", []byte("x"))
	if err == nil {
		t.Fatal("Put with wrong credentials succeeded")
	}
	t.Logf("error with wrong credentials: %v", err)
	if !strings.Contains(err.Error(), "denied/key") || !strings.Contains(err.Error(), "put") {
		t.Errorf("error %q does not name the operation and key", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error leaks the secret: %q", err)
	}
	if strings.Contains(st.Describe(), secret) || strings.Contains(st.Describe(), "wrong-access-key") {
		t.Errorf("Describe leaks credentials: %q", st.Describe())
	}
}

func TestNewS3MissingCredentialEnv(t *testing.T) {
	t.Setenv("GLOSSOBENCH_TEST_EMPTY_AK", "")
	_, err := store.NewS3(context.Background(), store.S3Config{
		Bucket: "b", AccessKeyEnv: "GLOSSOBENCH_TEST_EMPTY_AK", SecretKeyEnv: "GLOSSOBENCH_TEST_EMPTY_SK",
	})
	if err == nil || !strings.Contains(err.Error(), "GLOSSOBENCH_TEST_EMPTY_AK") {
		t.Fatalf("err = %v, want one naming the unset variable", err)
	}
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, uri := range []string{dir, "file:" + dir, "file://" + dir} {
		st, err := store.Open(ctx, uri)
		if err != nil {
			t.Fatalf("Open(%q): %v", uri, err)
		}
		if want := "file:" + dir; st.Describe() != want {
			t.Errorf("Open(%q).Describe() = %q, want %q", uri, st.Describe(), want)
		}
	}
	s3, err := store.Open(ctx, "s3://bkt/some/prefix/?endpoint=http://127.0.0.1:7070&region=eu-west-1&path_style=true&access_key_env=AK&secret_key_env=SK")
	if err == nil {
		// Only fails when AK/SK are unset, which is what we expect here.
		t.Fatalf("Open with unset credential variables = %v, want an error", s3.Describe())
	}
	t.Setenv("AK", "id")
	t.Setenv("SK", "secret")
	s3, err = store.Open(ctx, "s3://bkt/some/prefix/?endpoint=http://127.0.0.1:7070&region=eu-west-1&path_style=true&access_key_env=AK&secret_key_env=SK")
	if err != nil {
		t.Fatal(err)
	}
	want := "s3://bkt/some/prefix?access_key_env=AK&endpoint=http%3A%2F%2F127.0.0.1%3A7070&path_style=true&region=eu-west-1&secret_key_env=SK"
	if got := s3.Describe(); got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
	for _, bad := range []string{"gs://bucket", "s3://", "s3://b/../x", "s3://b?endpont=x", "s3://b?path_style=maybe", "s3://b?endpoint=ftp://h", "s3://user:pass@b/p", "s3://b?access_key_env=AK", "s3://b?region=a&region=b"} {
		if _, err := store.Open(ctx, bad); err == nil {
			t.Errorf("Open(%q) succeeded, want an error", bad)
		} else if strings.Contains(err.Error(), "pass") && strings.Contains(bad, "pass") {
			t.Errorf("Open(%q) error leaks the password: %v", bad, err)
		}
	}
}

func TestParseS3URI(t *testing.T) {
	cfg, err := store.ParseS3URI("s3://bench/ckpt/ms?endpoint=https://s3.example.org&path_style=1")
	if err != nil {
		t.Fatal(err)
	}
	want := store.S3Config{Endpoint: "https://s3.example.org", Bucket: "bench", Prefix: "ckpt/ms", PathStyle: true}
	if cfg != want {
		t.Errorf("ParseS3URI = %+v, want %+v", cfg, want)
	}
}

func TestLocalKeyPrefixConflict(t *testing.T) {
	ctx := context.Background()
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "a/b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// A local store cannot hold "a" as both a directory and an object: the
	// error must say so rather than claim the key exists.
	if err := st.Put(ctx, "a", []byte("y")); err == nil || errors.Is(err, store.ErrExists) {
		t.Errorf("Put(a) over prefix a/ = %v, want a prefix conflict error", err)
	}
	if err := st.Put(ctx, "a/b/c", []byte("y")); err == nil || errors.Is(err, store.ErrExists) {
		t.Errorf("Put(a/b/c) under object a/b = %v, want a prefix conflict error", err)
	}
}

// TestLocalRootNotEscaped checks that nothing is written outside the root
// even for keys that only look like traversal after joining.
func TestLocalRootNotEscaped(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	st, err := store.NewLocal(filepath.Join(parent, "root"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"../outside", "a/../../outside", "/outside"} {
		_ = st.Put(ctx, key, []byte("x"))
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "root" {
		t.Fatalf("parent directory holds %v, want only root", entries)
	}
}

func FuzzValidKey(f *testing.F) {
	for _, s := range []string{"a", "a/b", "../x", "a//b", "a\\b", "/a", "a\x00", ".tmp-x", "é/ü", "a/./b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if store.ValidKey(key) != nil {
			return
		}
		// A valid key stays inside the root once joined onto it.
		root := "/r"
		joined := filepath.Join(root, filepath.FromSlash(key))
		if !strings.HasPrefix(joined, root+"/") {
			t.Fatalf("valid key %q escapes the root: %q", key, joined)
		}
		if filepath.ToSlash(strings.TrimPrefix(joined, root+"/")) != key {
			t.Fatalf("valid key %q is not clean: joins to %q", key, joined)
		}
	})
}

func FuzzParseS3URI(f *testing.F) {
	for _, s := range []string{"s3://b", "s3://b/p?endpoint=http://h:1", "s3://b/../x", "s3://u:p@b", "s3://b?path_style=true&region=r", "s3://b?x=%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		cfg, err := store.ParseS3URI(uri)
		if err != nil {
			return
		}
		if cfg.Bucket == "" {
			t.Fatalf("ParseS3URI(%q) accepted an empty bucket", uri)
		}
		if cfg.Prefix != "" && store.ValidKey(cfg.Prefix) != nil {
			t.Fatalf("ParseS3URI(%q) accepted prefix %q", uri, cfg.Prefix)
		}
	})
}
