package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const crashDirEnv = "GLOSSOBENCH_STORE_CRASH_DIR"

// TestLocalCrashMidWrite kills a writer process with SIGKILL while half an
// object is on disk and checks that the key stays absent, invisible to List,
// and writable afterwards.
func TestLocalCrashMidWrite(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashingWriter(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLocalCrashMidWrite$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "HALF-WRITTEN" {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("writer exited before reaching the half-written point")
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("writer never reached the half-written point")
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	cmd.Wait()

	// The half-written temporary file is really there...
	tmps, _ := filepath.Glob(filepath.Join(dir, "ckpt", tmpMark+"*"))
	if len(tmps) != 1 {
		t.Fatalf("found temporary files %q, want the one the killed writer left", tmps)
	}
	if fi, err := os.Stat(tmps[0]); err != nil || fi.Size() != crashSize/2 {
		t.Fatalf("temporary file: %v, %v; want %d bytes written before the kill", fi, err, crashSize/2)
	}
	// ...yet no object is visible.
	st, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := st.Get(ctx, crashKey); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after crash = %v, want ErrNotFound", err)
	}
	if ok, err := st.Exists(ctx, crashKey); ok || err != nil {
		t.Errorf("Exists after crash = %v, %v; want false", ok, err)
	}
	if keys, err := st.List(ctx, ""); err != nil || len(keys) != 0 {
		t.Errorf("List after crash = %q, %v; want nothing", keys, err)
	}
	// A restarted writer can store the object whole.
	if err := st.Put(ctx, crashKey, crashData()); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, crashKey)
	if err != nil || !bytes.Equal(got, crashData()) {
		t.Fatalf("Get after rewrite: %d bytes, %v; want %d bytes", len(got), err, crashSize)
	}
	if keys, _ := st.List(ctx, ""); len(keys) != 1 || keys[0] != crashKey {
		t.Errorf("List after rewrite = %q, want [%s]", keys, crashKey)
	}
}

const (
	crashKey  = "ckpt/shard-0001.jsonl"
	crashSize = 4 << 20
)

func crashData() []byte {
	return bytes.Repeat([]byte("{\"item\":\"x\"}\n"), crashSize/13+1)[:crashSize]
}

// crashingWriter runs in the child process: it stops forever halfway through
// writing an object and waits to be killed.
func crashingWriter(dir string) {
	st, err := NewLocal(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	afterPartialWrite = func() {
		fmt.Println("HALF-WRITTEN")
		select {}
	}
	st.Put(context.Background(), crashKey, crashData())
	os.Exit(1) // unreachable unless the hook did not run
}

// TestLocalWriteErrorLeavesNothing fails a write midway (by panicking out of
// the hook, as a crashing goroutine would) and checks no object appears.
func TestLocalWriteErrorLeavesNothing(t *testing.T) {
	st, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	afterPartialWrite = func() { panic("interrupted") }
	func() {
		defer func() { recover() }()
		st.Put(context.Background(), "a/b", []byte("0123456789"))
	}()
	afterPartialWrite = nil
	ctx := context.Background()
	if ok, _ := st.Exists(ctx, "a/b"); ok {
		t.Fatal("object visible after an interrupted write")
	}
	if keys, _ := st.List(ctx, "a/"); len(keys) != 0 {
		t.Fatalf("List = %q after an interrupted write, want nothing", keys)
	}
	if err := st.Put(ctx, "a/b", []byte("whole")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(st.Dir(), "a"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !strings.Contains(strings.Join(names, " "), "b") {
		t.Fatalf("directory holds %q, want b", names)
	}
}
