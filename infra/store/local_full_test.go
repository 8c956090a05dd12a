package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A write that runs out of disk fails with an error naming the key and
// wrapping ENOSPC, leaves neither the object nor a temporary file behind,
// keeps what was written before intact, and succeeds once space is freed.
func TestLocalDiskFull(t *testing.T) {
	disk := t.TempDir()
	if err := syscall.Mount("tmpfs", disk, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a 1 MiB tmpfs (%v): needs root with CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() { syscall.Unmount(disk, syscall.MNT_DETACH) })
	ctx := context.Background()
	st, err := NewLocal(filepath.Join(disk, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "runs/r/small.json", []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 2<<20) // twice the disk
	err = st.Put(ctx, "runs/r/big.jsonl", big)
	if err == nil {
		t.Fatal("a 2 MiB object fit on a 1 MiB disk")
	}
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), `"runs/r/big.jsonl"`) {
		t.Fatalf("err = %v; want ENOSPC naming the key", err)
	}
	if ok, _ := st.Exists(ctx, "runs/r/big.jsonl"); ok {
		t.Fatal("the object that did not fit is visible")
	}
	entries, _ := os.ReadDir(filepath.Join(st.Dir(), "runs", "r"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpMark) {
			t.Fatalf("temporary file %s left behind after the failed write", e.Name())
		}
	}
	if got, err := st.Get(ctx, "runs/r/small.json"); err != nil || string(got) != `{"ok":true}` {
		t.Fatalf("earlier object = %q, %v", got, err)
	}
	// The failed write freed its space: a fitting object goes in, the key
	// that failed is free to be written.
	half := big[:256<<10]
	if err := st.Put(ctx, "runs/r/big.jsonl", half); err != nil {
		t.Fatalf("after the failed write: %v", err)
	}
	if got, err := st.Get(ctx, "runs/r/big.jsonl"); err != nil || !bytes.Equal(got, half) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
}
