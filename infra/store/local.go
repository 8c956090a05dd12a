package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Local stores each object as a file under a root directory; key "a/b" is the
// file DIR/a/b.
//
// A write goes to a temporary file in the target's directory, is fsynced, and
// is then hard-linked to its final name. link(2) fails if the name exists, so
// the write is create-only, and the name only ever appears with the whole
// content behind it: a crash mid-write leaves at most an orphaned ".tmp-*"
// file, which List and Get never show.
type Local struct {
	dir string
}

// afterPartialWrite, when set by a test, runs after half of an object has
// been written to its temporary file, so a test can crash the writer there.
var afterPartialWrite func()

// NewLocal returns a store rooted at dir, creating the directory if needed.
func NewLocal(dir string) (*Local, error) {
	if dir == "" {
		return nil, errors.New("store: local store needs a directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store: local directory %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("store: local directory: %w", err)
	}
	return &Local{dir: abs}, nil
}

// Describe returns "file:" and the absolute root directory.
func (l *Local) Describe() string { return "file:" + l.dir }

// Dir returns the absolute root directory.
func (l *Local) Dir() string { return l.dir }

func (l *Local) path(key string) string {
	return filepath.Join(l.dir, filepath.FromSlash(key))
}

// Put implements Store.
func (l *Local) Put(ctx context.Context, key string, data []byte) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store: put: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: put %q: %w", key, err)
	}
	target := l.path(key)
	dir := filepath.Dir(target)
	if err := l.mkdirAll(dir); err != nil {
		return fmt.Errorf("store: put %q in %s: %w", key, l.Describe(), err)
	}
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return fmt.Errorf("store: put %q in %s: %w", key, l.Describe(), err)
	}
	err = os.Link(tmp, target)
	os.Remove(tmp)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Lstat(target); serr == nil && fi.IsDir() {
			return fmt.Errorf("store: put %q in %s: the key is already a prefix of other keys, which a local store cannot also hold as an object", key, l.Describe())
		}
		return fmt.Errorf("store: put %q: %w", key, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("store: put %q in %s: %w", key, l.Describe(), err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("store: put %q in %s: %w", key, l.Describe(), err)
	}
	return nil
}

// writeTemp writes data to a new fsynced temporary file in dir and returns
// its path.
func writeTemp(dir string, data []byte) (path string, err error) {
	f, err := os.CreateTemp(dir, tmpMark+"*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	half := len(data) / 2
	if _, err := f.Write(data[:half]); err != nil {
		return "", err
	}
	if afterPartialWrite != nil {
		afterPartialWrite()
	}
	if _, err := f.Write(data[half:]); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return f.Name(), nil
}

// mkdirAll creates dir and its missing parents, fsyncing each new directory's
// parent so the directory entries survive a crash along with the object.
func (l *Local) mkdirAll(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is an object, not a prefix", dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir && strings.HasPrefix(parent, l.dir) {
		if err := l.mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		if errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("%s: a prefix of the key is an object", dir)
		}
		return err
	}
	return syncDir(parent)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		// Some filesystems cannot fsync a directory (EINVAL); the data itself
		// was synced, which is the best they offer.
		return err
	}
	return nil
}

// Get implements Store.
func (l *Local) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ValidKey(key); err != nil {
		return nil, fmt.Errorf("store: get: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store: get %q: %w", key, err)
	}
	data, err := os.ReadFile(l.path(key))
	if err != nil {
		if isMissing(err) {
			return nil, fmt.Errorf("store: get %q: %w", key, ErrNotFound)
		}
		return nil, fmt.Errorf("store: get %q in %s: %w", key, l.Describe(), err)
	}
	return data, nil
}

// isMissing reports whether err means there is no object: the file does not
// exist, a parent is a file, or the name is a directory (a prefix).
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR)
}

// Exists implements Store.
func (l *Local) Exists(ctx context.Context, key string) (bool, error) {
	if err := ValidKey(key); err != nil {
		return false, fmt.Errorf("store: exists: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("store: exists %q: %w", key, err)
	}
	fi, err := os.Lstat(l.path(key))
	if err != nil {
		if isMissing(err) {
			return false, nil
		}
		return false, fmt.Errorf("store: exists %q in %s: %w", key, l.Describe(), err)
	}
	return fi.Mode().IsRegular(), nil
}

// List implements Store. It walks only the directory named by the prefix up
// to its last slash, and sorts the result bytewise as S3 does.
func (l *Local) List(ctx context.Context, prefix string) ([]string, error) {
	if err := validPrefix(prefix); err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	base := prefix[:strings.LastIndex(prefix, "/")+1] // "" or "a/b/"
	root := l.path(strings.TrimSuffix(base, "/"))
	var keys []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root && isMissing(err) {
				return fs.SkipAll
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if path == root {
			if !d.IsDir() {
				return fs.SkipAll // the "directory" is an object: nothing under it
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), tmpMark) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		key := base + filepath.ToSlash(rel)
		if d.IsDir() {
			dirKey := key + "/"
			if !strings.HasPrefix(dirKey, prefix) && !strings.HasPrefix(prefix, dirKey) {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list %q in %s: %w", prefix, l.Describe(), err)
	}
	slices.Sort(keys)
	return keys, nil
}
