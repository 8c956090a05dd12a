package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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
//
// Every file operation goes through an os.Root opened on the directory, so a
// symlink planted inside it (say DIR/runs -> /etc) cannot lead a Put, Get,
// Exists or List outside: the operation fails instead. Valid keys already
// cannot name a path outside; the root closes the symlink route as well.
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

// openRoot opens the root directory for one operation. Opening it per
// operation rather than once keeps the store path-based, as it always was: a
// root directory removed and recreated is picked up, and no descriptor is
// held for the life of the store, which has no Close.
func (l *Local) openRoot() (*os.Root, error) {
	return os.OpenRoot(l.dir)
}

// name returns key as a path relative to the root.
func name(key string) string { return filepath.FromSlash(key) }

// Put implements Store.
func (l *Local) Put(ctx context.Context, key string, data []byte) error {
	return l.put(ctx, key, func(f io.Writer) error {
		half := len(data) / 2
		if _, err := f.Write(data[:half]); err != nil {
			return err
		}
		if afterPartialWrite != nil {
			afterPartialWrite()
		}
		_, err := f.Write(data[half:])
		return err
	})
}

// PutFile implements Store: the file is copied into a temporary file beside
// the target and linked like Put's.
func (l *Local) PutFile(ctx context.Context, key, path string) error {
	src, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store: put %q: %w", key, err)
	}
	defer src.Close()
	return l.put(ctx, key, func(f io.Writer) error {
		_, err := io.Copy(f, src)
		return err
	})
}

// put writes an object's content with write into a temporary file in the
// key's directory, fsyncs it and links it to the key, create-only.
func (l *Local) put(ctx context.Context, key string, write func(io.Writer) error) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("store: put: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: put %q: %w", key, err)
	}
	root, err := l.openRoot()
	if err != nil {
		return fmt.Errorf("store: put %q in %s: %w", key, l.Describe(), err)
	}
	defer root.Close()
	dir := filepath.Dir(name(key)) // "." for a key without a slash
	if err := mkdirAll(root, dir); err != nil {
		return fmt.Errorf("store: put %q in %s: %w", key, l.Describe(), err)
	}
	tmp, err := writeTemp(root, dir, write)
	if err != nil {
		return fmt.Errorf("store: put %q in %s: %w", key, l.Describe(), err)
	}
	return l.link(root, tmp, key)
}

// link gives the written temporary file tmp its final name, create-only.
func (l *Local) link(root *os.Root, tmp, key string) error {
	target := name(key)
	err := root.Link(tmp, target)
	root.Remove(tmp)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := root.Lstat(target); serr == nil && fi.IsDir() {
			return fmt.Errorf("store: put %q in %s: the key is already a prefix of other keys, which a local store cannot also hold as an object", key, l.Describe())
		}
		return fmt.Errorf("store: put %q: %w", key, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("store: put %q in %s: %w", key, l.Describe(), err)
	}
	if err := syncDir(root, filepath.Dir(target)); err != nil {
		return fmt.Errorf("store: put %q in %s: %w", key, l.Describe(), err)
	}
	return nil
}

// writeTemp creates a new temporary file in dir (relative to root), fills it
// with write, fsyncs it and returns its path relative to root. os.Root has no
// CreateTemp, so the name carries 128 random bits and O_EXCL refuses to reuse
// any file that might already have it.
func writeTemp(root *os.Root, dir string, write func(io.Writer) error) (path string, err error) {
	var random [16]byte
	rand.Read(random[:])
	tmp := filepath.Join(dir, tmpMark+hex.EncodeToString(random[:]))
	f, err := root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return tmp, nil
}

// mkdirAll creates dir (relative to root) and its missing parents, fsyncing
// each new directory's parent so the directory entries survive a crash along
// with the object.
func mkdirAll(root *os.Root, dir string) error {
	fi, err := root.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is an object, not a prefix", filepath.ToSlash(dir))
		}
		return nil
	}
	if !isMissing(err) {
		return err // for one, a symlink that leads out of the root
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAll(root, parent); err != nil {
			return err
		}
	}
	if err := root.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		if errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("%s: a prefix of the key is an object", filepath.ToSlash(dir))
		}
		return err
	}
	return syncDir(root, parent)
}

// syncDir fsyncs dir (relative to root).
func syncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
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
	f, size, err := l.open(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("store: get %q in %s: %w", key, l.Describe(), err)
	}
	return data, nil
}

// Open implements Store.
func (l *Local) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	f, _, err := l.open(ctx, "open", key)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// open opens the object's file and says how large it is; a missing file or
// a prefix (a directory) is ErrNotFound.
func (l *Local) open(ctx context.Context, op, key string) (*os.File, int64, error) {
	if err := ValidKey(key); err != nil {
		return nil, 0, fmt.Errorf("store: %s: %w", op, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: %s %q: %w", op, key, err)
	}
	root, err := l.openRoot()
	if err != nil {
		return nil, 0, fmt.Errorf("store: %s %q in %s: %w", op, key, l.Describe(), err)
	}
	defer root.Close() // an open file outlives its root
	f, err := root.Open(name(key))
	var fi os.FileInfo
	if err == nil {
		if fi, err = f.Stat(); err == nil && fi.IsDir() {
			err = syscall.EISDIR
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		if isMissing(err) {
			return nil, 0, fmt.Errorf("store: %s %q: %w", op, key, ErrNotFound)
		}
		return nil, 0, fmt.Errorf("store: %s %q in %s: %w", op, key, l.Describe(), err)
	}
	return f, fi.Size(), nil
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
	root, err := l.openRoot()
	if err != nil {
		return false, fmt.Errorf("store: exists %q in %s: %w", key, l.Describe(), err)
	}
	defer root.Close()
	fi, err := root.Lstat(name(key))
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
	root, err := l.openRoot()
	if err != nil {
		return nil, fmt.Errorf("store: list %q in %s: %w", prefix, l.Describe(), err)
	}
	defer root.Close()
	base := prefix[:strings.LastIndex(prefix, "/")+1] // "" or "a/b/"
	start := strings.TrimSuffix(base, "/")
	if start == "" {
		start = "."
	}
	// Paths in root.FS() are slash-separated and relative to the root, so
	// every path the walk visits below start is already a key.
	var keys []string
	err = fs.WalkDir(root.FS(), start, func(key string, d fs.DirEntry, err error) error {
		if err != nil {
			if key == start && isMissing(err) {
				return fs.SkipAll
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if key == start {
			if !d.IsDir() {
				return fs.SkipAll // the "directory" is an object: nothing under it
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), tmpMark) {
			return nil
		}
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
