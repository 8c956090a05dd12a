package runner_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/workflows"
)

// Throwaway credentials of the test's own versitygw, bound to loopback.
const (
	chaosS3Key    = "glossobench-chaos"
	chaosS3Secret = "glossobench-chaos-secret"
)

// versitygwBin finds the versitygw binary .ci/versitygw.sh installs.
func versitygwBin() string {
	dir := os.Getenv("GLOSSOBENCH_BIN")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".cache", "glossobench", "bin")
	}
	bin := filepath.Join(dir, "versitygw")
	if _, err := os.Stat(bin); err != nil {
		return ""
	}
	return bin
}

// s3Server is a versitygw of the test's own: its own port and folder, so
// the shared one the other tests use is never disturbed.
type s3Server struct {
	bin, dir, addr string
	cmd            *exec.Cmd
	done           chan struct{}
}

func (s *s3Server) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(s.bin, "--port", s.addr, "--quiet", "posix", filepath.Join(s.dir, "data"))
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+chaosS3Key, "ROOT_SECRET_KEY="+chaosS3Secret)
	logf, err := os.OpenFile(filepath.Join(s.dir, "versitygw.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logf.Close()
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
			c.Close()
			return
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(s.dir, "versitygw.log"))
			t.Fatalf("versitygw exited at start: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw not answering on %s after 30 s", s.addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill ends the server the hard way, as a crash or a lost machine would.
func (s *s3Server) kill() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Fault-matrix case 3: the S3 server (a versitygw of the test's own) is
// killed mid-run and comes back 30 s later on the same folder and port.
// Activities retry with backoff; afterwards every object of the run is listed
// and parsed whole: no checkpoint object is lost, duplicated or half-written,
// and the result equals an undisturbed run's on the same store.
func TestChaosS3Outage(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s S3 outage inside an EvalRun")
	}
	bin := versitygwBin()
	if bin == "" {
		t.Skip("versitygw not installed in $GLOSSOBENCH_BIN or ~/.cache/glossobench/bin (.ci/versitygw.sh start installs it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s3 := &s3Server{bin: bin, dir: t.TempDir(), addr: addr}
	if err := os.MkdirAll(filepath.Join(s3.dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	s3.start(t)
	t.Cleanup(s3.kill)

	t.Setenv("GLOSSOBENCH_CHAOS_S3_KEY", chaosS3Key)
	t.Setenv("GLOSSOBENCH_CHAOS_S3_SECRET", chaosS3Secret)
	uri := fmt.Sprintf("s3://chaos/runs-store?endpoint=http://%s&region=us-east-1&path_style=true&access_key_env=GLOSSOBENCH_CHAOS_S3_KEY&secret_key_env=GLOSSOBENCH_CHAOS_S3_SECRET", addr)
	ctx := context.Background()
	st, err := store.Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.(*store.S3).EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}

	c := serverWithWorkers(t)
	// One model server per run, so each counts its own run's calls.
	refModel := httptest.NewServer(&fakeModel{seen: map[string]int{}})
	defer refModel.Close()
	model := &fakeModel{seen: map[string]int{}}
	hs := httptest.NewServer(model)
	defer hs.Close()
	config := func(url string) string {
		return mcqConfig(t, url, uri, "generate", "  flavor: vllm\n  concurrency: 2\n")
	}

	runEval(t, c, workflows.EvalRunInput{Config: config(refModel.URL), RunID: "s3-ref"})
	want := readStoredResult(t, st, "s3-ref")

	wf := startRun(t, c, workflows.EvalRunInput{Config: config(hs.URL), RunID: "s3-outage"})
	waitAnswered(t, model, 15, 2*time.Minute)
	s3.kill()
	downAt, _ := model.count()
	outage := 30 * time.Second
	time.Sleep(outage)
	s3.start(t)
	back := time.Now()
	awaitRun(t, c, wf, 5*time.Minute)
	recovered := time.Since(back)

	total, repeated := model.count()
	rep := auditCheckpoints(t, st, "s3-outage")
	got := readStoredResult(t, st, "s3-outage")
	t.Logf("S3 down after %d model calls of the run, for %s; %d calls in all, %d repeated; %d objects audited; recovered in %s",
		downAt, outage, total, repeated, rep.objects, recovered.Round(time.Millisecond))
	lost := mcqItems - rep.predicted
	chaosRow(t, "3 S3 server killed, back after 30s", 1, 1, lost, repeated, model.firstCallAfter(back), recovered)
	if rep.missing != 0 || rep.predicted != mcqItems {
		t.Fatalf("%d of %d items have a checkpointed prediction, %d missing", rep.predicted, mcqItems, rep.missing)
	}
	// The model server never went away, and a checkpoint write outlasts the
	// outage (the store retries a Put for about a minute), so no answered
	// item may be thrown away and asked again.
	if repeated != 0 {
		t.Fatalf("%d items were sent to the model again: answered work was lost with a failed checkpoint write", repeated)
	}
	if total-repeated != mcqItems {
		t.Fatalf("the model answered %d distinct items, want %d", total-repeated, mcqItems)
	}
	sameScores(t, "after an S3 outage", got, want)
}
