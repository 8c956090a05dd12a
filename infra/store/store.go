// Package store keeps checkpoint items: small immutable objects addressed by
// slash-separated keys. Every write is create-only, so a retried or restarted
// activity can never overwrite an item another attempt already recorded, and
// concurrent writers of the same key race safely: exactly one of them wins.
//
// Two implementations exist: Local (a directory on disk, the embedded
// default) and S3 (any S3-compatible server through aws-sdk-go-v2). Open picks
// one from a URI so configuration stays a single string.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ErrNotFound reports that no object is stored under a key.
var ErrNotFound = errors.New("store: not found")

// ErrExists reports that a create-only write found the key already taken.
var ErrExists = errors.New("store: already exists")

// Store is a flat, create-only object store.
type Store interface {
	// Put stores data under key. It never overwrites: if the key exists it
	// returns an error wrapping ErrExists and leaves the stored object as is.
	Put(ctx context.Context, key string, data []byte) error
	// PutFile stores the contents of the local file at path under key,
	// create-only like Put, without reading the file into memory: large
	// objects (an axis's items or item scores) are spooled to a file first.
	PutFile(ctx context.Context, key, path string) error
	// Get returns the object stored under key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Open returns a reader of the object stored under key, or an error
	// wrapping ErrNotFound; the caller closes it. Large objects are read
	// through it a line at a time.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns the keys starting with prefix, sorted bytewise.
	// The prefix is a plain string prefix, as in S3, not a directory name.
	List(ctx context.Context, prefix string) ([]string, error)
	// Exists reports whether an object is stored under key.
	Exists(ctx context.Context, key string) (bool, error)
	// Describe names the store for logs and results, without secrets.
	Describe() string
}

// MaxKeyLen is S3's limit on the length of an object key, in bytes. Keys are
// kept portable: a key valid for one store is valid for all of them.
const MaxKeyLen = 1024

// tmpMark starts the names of Local's in-flight temporary files. Keys may not
// use it so that a temporary file can never be mistaken for an object.
const tmpMark = ".tmp-"

// ValidKey reports whether key is a well-formed object key: non-empty valid
// UTF-8 of at most MaxKeyLen bytes, slash-separated segments that are neither
// empty, "." nor "..", no leading slash, no backslash, no NUL or other control
// character, and no segment starting with the reserved ".tmp-". These rules
// keep a key inside the store's root directory or prefix.
func ValidKey(key string) error {
	if key == "" {
		return errors.New("store: empty key")
	}
	if err := checkChars(key); err != nil {
		return err
	}
	if strings.HasPrefix(key, "/") {
		return fmt.Errorf("store: key %q is absolute", key)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if err := checkSegment(key, seg); err != nil {
			return err
		}
	}
	return nil
}

// validPrefix checks a List prefix: like a key, but it may be empty and its
// last segment may be empty or partial ("runs/" or "runs/ab").
func validPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := checkChars(prefix); err != nil {
		return err
	}
	if strings.HasPrefix(prefix, "/") {
		return fmt.Errorf("store: prefix %q is absolute", prefix)
	}
	segs := strings.Split(prefix, "/")
	for i, seg := range segs {
		if i == len(segs)-1 && seg == "" {
			break
		}
		if err := checkSegment(prefix, seg); err != nil {
			return err
		}
	}
	return nil
}

func checkChars(key string) error {
	if len(key) > MaxKeyLen {
		return fmt.Errorf("store: key %.40q... is %d bytes, over the %d-byte limit", key, len(key), MaxKeyLen)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("store: key %q is not valid UTF-8", key)
	}
	for _, r := range key {
		switch {
		case r == 0:
			return fmt.Errorf("store: key %q contains a NUL byte", key)
		case r == '\\':
			return fmt.Errorf("store: key %q contains a backslash", key)
		case r < 0x20 || r == 0x7f:
			return fmt.Errorf("store: key %q contains control character %U", key, r)
		}
	}
	return nil
}

func checkSegment(key, seg string) error {
	switch {
	case seg == "":
		return fmt.Errorf("store: key %q has an empty segment", key)
	case seg == "." || seg == "..":
		return fmt.Errorf("store: key %q has a %q segment", key, seg)
	case strings.HasPrefix(seg, tmpMark):
		return fmt.Errorf("store: key %q has a segment starting with the reserved %q", key, tmpMark)
	}
	return nil
}
