package runner_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/workflows"
)

// mountSmallDisk mounts a tmpfs of the given size on a fresh folder and
// unmounts it when the test ends. It skips the test where mounting is not
// permitted (not root, or a container without CAP_SYS_ADMIN).
func mountSmallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a %s tmpfs to fill up (%v): the disk-full case needs root with CAP_SYS_ADMIN", size, err)
	}
	// Detached, so a file still open in a stopping worker cannot block it.
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fillDisk writes a ballast file in dir until the filesystem is full.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "ballast")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	// The last page or two may still take a few bytes; take them too.
	for {
		if _, err := f.Write([]byte{0}); err != nil {
			break
		}
	}
	return p
}

// checkStoreReadable fails the test unless every object under root parses
// (JSON documents whole, JSONL line by line, CSV) and no half-written temporary
// file is left behind. It returns how many objects it read.
func checkStoreReadable(t *testing.T, root string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), ".tmp-") {
			t.Errorf("a temporary file was left behind: %s", p)
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		switch {
		case strings.HasSuffix(p, ".jsonl"):
			if len(data) == 0 || data[len(data)-1] != '\n' {
				t.Errorf("%s: does not end in a newline: cut short?", p)
			}
			for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				if !json.Valid(line) {
					t.Errorf("%s:%d: not JSON: %.80q", p, i+1, line)
				}
			}
		case strings.HasSuffix(p, ".json"):
			if !json.Valid(data) {
				t.Errorf("%s: not JSON", p)
			}
		case strings.HasSuffix(p, ".csv"):
			if _, err := csv.NewReader(bytes.NewReader(data)).ReadAll(); err != nil || len(data) == 0 {
				t.Errorf("%s: not CSV (%d bytes): %v", p, len(data), err)
			}
		default:
			// A kind of object this check does not know how to parse yet.
			t.Logf("%s: not checked (unknown format)", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Fault-matrix case 6: the local store's disk fills up mid-run. The
// checkpoint write fails with an error that names the key and the cause;
// the inference activity retries with backoff instead of losing or
// corrupting anything; every object written so far parses and no
// half-written file is left. Once space is freed the run completes with the
// result of an undisturbed run.
func TestChaosDiskFull(t *testing.T) {
	disk := mountSmallDisk(t, "4m")
	c := serverWithWorkers(t)
	fake := &fakeModel{seen: map[string]int{}}
	hs := httptest.NewServer(fake)
	defer hs.Close()

	storeDir := filepath.Join(disk, "store")
	cfg := mcqConfig(t, hs.URL, storeDir, "generate", "  flavor: vllm\n  concurrency: 2\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const wfID = "evalrun-chaos-disk"
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wfID, TaskQueue: workflows.TaskQueue},
		workflows.WorkflowName, workflows.EvalRunInput{Config: cfg, RunID: "chaos-disk"})
	if err != nil {
		t.Fatal(err)
	}
	for total, _ := fake.count(); total < 12; total, _ = fake.count() {
		time.Sleep(5 * time.Millisecond)
	}
	ballast := fillDisk(t, disk)
	filledAt, _ := fake.count()

	// What the operator sees: Infer holds the answered items and retries
	// the write, saying why in its heartbeat (or, past its patience, in the
	// pending activity's last failure), on the run's page or on its axis's
	// InferAxis child's.
	var failure string
	deadline := time.Now().Add(2 * time.Minute)
	for failure == "" && time.Now().Before(deadline) {
		for _, id := range append([]string{wfID}, childWorkflows(t, c, wfID)...) {
			d, err := c.DescribeWorkflowExecution(ctx, id, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, pa := range d.PendingActivities {
				var p activities.InferProgress
				if pa.GetHeartbeatDetails() != nil && converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &p) == nil && strings.Contains(p.Waiting, "no space left") {
					failure = pa.GetActivityType().GetName() + ": " + p.Waiting
				}
				if f := pa.GetLastFailure(); f != nil && strings.Contains(f.GetMessage(), "no space left") {
					failure = pa.GetActivityType().GetName() + ": " + f.GetMessage()
				}
			}
			if id == wfID && d.GetWorkflowExecutionInfo().GetCloseTime() != nil {
				t.Fatal("the run closed while the disk was full")
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if failure == "" {
		t.Fatal("no activity reported the full disk within 2 minutes")
	}
	t.Logf("while full: %s", failure)
	if !strings.Contains(failure, `"runs/chaos-disk/`) || !strings.Contains(failure, "no space left on device") {
		t.Errorf("the error does not name the key and the cause: %s", failure)
	}
	objects := checkStoreReadable(t, storeDir)
	t.Logf("store while full: %d objects, all parse", objects)

	freed := time.Now()
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	var res workflows.EvalRunResult
	if err := we.Get(ctx, &res); err != nil {
		t.Fatalf("the run did not complete after space was freed: %v", err)
	}
	recovered := time.Since(freed)
	checkStoreReadable(t, storeDir)
	total, repeated := fake.count()
	t.Logf("model calls: %d before the disk filled, %d in all, %d repeated; recovered %s after space was freed",
		filledAt, total, repeated, recovered.Round(time.Millisecond))

	// An undisturbed run of the same config on an ordinary disk.
	refCfg := mcqConfig(t, hs.URL, t.TempDir(), "generate", "  flavor: vllm\n  concurrency: 2\n")
	ref := runEval(t, c, workflows.EvalRunInput{Config: refCfg, RunID: "chaos-disk-ref"})
	got, want := readResult(t, res.Summary.ResultPath), readResult(t, ref.Summary.ResultPath)
	lost := 0
	for axis, ax := range want.Axes {
		g := got.Axes[axis]
		lost += ax.N - g.N
		if g.Score == nil || *g.Score != *ax.Score || g.N != ax.N || *g.CI95 != *ax.CI95 {
			t.Errorf("axis %s after a full disk %+v differs from undisturbed %+v", axis, g.AxisResult, ax.AxisResult)
		}
	}
	if *got.Summary.MSPublic != *want.Summary.MSPublic {
		t.Error("ms_public differs after a full disk")
	}
	// Infer holds answers it cannot save and retries the write, so no
	// answer is asked for twice, and every item was answered.
	if items := 20 + 20 + 12; total-repeated != items || repeated != 0 {
		t.Errorf("model answered %d distinct items (want %d), %d calls repeated (want 0)", total-repeated, items, repeated)
	}
	chaosRow(t, "6 local disk full", 1, 1, lost, repeated, fake.firstCallAfter(freed), recovered)
}
