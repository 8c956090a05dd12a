package store_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/store"
)

// TestLocalSymlinkOutOfRoot plants, inside a store's root, a symlink to a
// directory outside it and a symlink to a file outside it, and checks that no
// operation follows them out: Put writes nothing outside, Get and Exists read
// nothing from outside, and List lists nothing from outside. A symlink that
// stays inside the root keeps working, so the failures come from the escape
// and not from symlinks as such.
func TestLocalSymlinkOutOfRoot(t *testing.T) {
	const secret = "outside, not an object"
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "r", "secret.json"), secret)
	mustWrite(t, filepath.Join(outside, "file.json"), secret)
	before := snapshot(t, outside)

	dir := t.TempDir()
	st, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, outside, filepath.Join(dir, "runs"))                                  // a directory outside
	mustSymlink(t, filepath.Join(outside, "file.json"), filepath.Join(dir, "loot.json")) // a file outside
	ctx := context.Background()

	// Put: into the linked directory, into a new directory under it, and
	// over the linked file.
	for _, key := range []string{"runs/r/new.json", "runs/fresh/new.json", "loot.json"} {
		err := st.Put(ctx, key, []byte("planted"))
		if err == nil {
			t.Errorf("Put %q through a symlink out of the root succeeded", key)
		} else if !strings.Contains(err.Error(), `"`+key+`"`) {
			t.Errorf("Put %q: error %q does not name the key", key, err)
		}
	}
	if after := snapshot(t, outside); !maps.Equal(before, after) {
		t.Errorf("the directory outside the root changed:\nbefore %q\nafter  %q", before, after)
	}

	// Get and Exists: through the linked directory and the linked file.
	for _, key := range []string{"runs/r/secret.json", "runs/file.json", "loot.json"} {
		data, err := st.Get(ctx, key)
		if err == nil || string(data) == secret {
			t.Errorf("Get %q = %q, %v; want an error and nothing read from outside", key, data, err)
		} else if errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), st.Describe()) {
			// Not "not found": the object is neither there nor absent, the
			// store is damaged, and the error says which store.
			t.Errorf("Get %q: error %q; want one naming %s, not ErrNotFound", key, err, st.Describe())
		}
		if ok, _ := st.Exists(ctx, key); ok {
			t.Errorf("Exists %q = true for a file outside the root", key)
		}
	}
	if _, err := st.Exists(ctx, "runs/r/secret.json"); err == nil {
		t.Error("Exists through a directory symlink out of the root gave no error")
	}

	// List: the whole store, the linked directory, and a directory under it.
	for _, prefix := range []string{"", "runs/", "runs/r/", "runs/r/sec"} {
		keys, err := st.List(ctx, prefix)
		for _, key := range keys {
			if strings.HasPrefix(key, "runs/") || key == "loot.json" {
				t.Errorf("List %q = %q: lists %q from outside the root", prefix, keys, key)
			}
		}
		if prefix == "runs/r/" && err == nil {
			t.Errorf("List %q through a symlink out of the root gave no error", prefix)
		}
	}

	// A symlink that stays inside the root is followed as before.
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "real", filepath.Join(dir, "alias"))
	if err := st.Put(ctx, "alias/k.json", []byte("inside")); err != nil {
		t.Fatalf("Put through a symlink inside the root: %v", err)
	}
	if got, err := st.Get(ctx, "real/k.json"); err != nil || string(got) != "inside" {
		t.Fatalf("Get real/k.json = %q, %v; want the object written through the alias", got, err)
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// snapshot maps every path under dir (directories end in "/") to the
// content of the file there.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			files[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(path)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
