package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/glossobench/glossobench/infra/store"
)

// fakeS3 is just enough of S3 (path-style PUT, GET, HEAD) to drive the
// client's error mapping and retries through failures a real server will not
// produce on demand. It checks no signature; the live tests cover that.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	// lostPuts makes the next PUTs store the object and then answer 500,
	// as if the response was lost after the server committed.
	lostPuts int
	// conflicts makes the next PUTs answer 409 ConditionalRequestConflict
	// without storing, as AWS does for racing conditional writes.
	conflicts int
	puts      int
	noBucket  bool
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fail := func(status int, code string) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			fmt.Fprintf(w, "<Error><Code>%s</Code><Message>fake</Message></Error>", code)
		}
	}
	if f.noBucket {
		fail(404, "NoSuchBucket")
		return
	}
	key := r.URL.Path
	switch r.Method {
	case http.MethodPut:
		f.puts++
		body, _ := io.ReadAll(r.Body)
		if f.conflicts > 0 {
			f.conflicts--
			fail(409, "ConditionalRequestConflict")
			return
		}
		if _, ok := f.objects[key]; ok && r.Header.Get("If-None-Match") == "*" {
			fail(412, "PreconditionFailed")
			return
		}
		f.objects[key] = body
		if f.lostPuts > 0 {
			f.lostPuts--
			fail(500, "InternalError")
			return
		}
		w.Header().Set("ETag", `"x"`)
	case http.MethodGet, http.MethodHead:
		data, ok := f.objects[key]
		if !ok {
			if r.Method == http.MethodHead {
				fail(404, "NotFound")
			} else {
				fail(404, "NoSuchKey")
			}
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		if r.Method == http.MethodGet {
			w.Write(data)
		}
	default:
		fail(501, "NotImplemented")
	}
}

func newFake(t *testing.T) (*fakeS3, *store.S3) {
	f := &fakeS3{objects: map[string][]byte{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Setenv("FAKE_AK", "id")
	t.Setenv("FAKE_SK", "secret")
	st, err := store.NewS3(context.Background(), store.S3Config{
		Endpoint: srv.URL, Bucket: "b", Prefix: "p", Region: "us-east-1", PathStyle: true,
		AccessKeyEnv: "FAKE_AK", SecretKeyEnv: "FAKE_SK",
	})
	if err != nil {
		t.Fatal(err)
	}
	return f, st
}

func TestS3FakeMapping(t *testing.T) {
	ctx := context.Background()
	f, st := newFake(t)
	if err := st.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.objects["/b/p/k"]; !ok {
		t.Fatalf("object stored as %v, want /b/p/k (bucket, prefix, key)", f.objects)
	}
	if err := st.Put(ctx, "k", []byte("w")); !errors.Is(err, store.ErrExists) {
		t.Errorf("Put over existing = %v, want ErrExists (412)", err)
	}
	if _, err := st.Get(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get missing = %v, want ErrNotFound", err)
	}
	if ok, err := st.Exists(ctx, "missing"); ok || err != nil {
		t.Errorf("Exists missing = %v, %v", ok, err)
	}
	f.noBucket = true
	if _, err := st.Get(ctx, "k"); err == nil || errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Errorf("Get with a missing bucket = %v, want a NoSuchBucket error, not ErrNotFound", err)
	}
}

// TestS3FakeLostResponse: the first PUT commits but its answer is lost; the
// retry meets 412 from its own write and must still report success.
func TestS3FakeLostResponse(t *testing.T) {
	ctx := context.Background()
	f, st := newFake(t)
	f.lostPuts = 1
	if err := st.Put(ctx, "k", []byte("mine")); err != nil {
		t.Fatalf("Put after a lost response = %v, want success", err)
	}
	if f.puts != 2 {
		t.Errorf("server saw %d PUTs, want 2 (one retry)", f.puts)
	}
	// A different writer whose retry meets someone else's bytes loses.
	f.lostPuts = 0
	f.objects["/b/p/other"] = []byte("theirs")
	if err := st.Put(ctx, "other", []byte("mine")); !errors.Is(err, store.ErrExists) {
		t.Errorf("Put onto another writer's object = %v, want ErrExists", err)
	}
}

func TestS3FakeConflictRetried(t *testing.T) {
	ctx := context.Background()
	f, st := newFake(t)
	f.conflicts = 2
	if err := st.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatalf("Put after two 409 conflicts = %v, want success on retry", err)
	}
	if f.puts != 3 {
		t.Errorf("server saw %d PUTs, want 3", f.puts)
	}
}
