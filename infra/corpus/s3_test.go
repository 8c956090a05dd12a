package corpus

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/glossobench/glossobench/infra/store/storetest"
	"github.com/glossobench/glossobench/scorers/checks/dedup"
	"github.com/glossobench/glossobench/scorers/checks/dedup/deduptest"
)

// s3Corpus uploads files (name -> bytes) under a fresh prefix of the test
// bucket and returns the corpus entry naming prefix/corpus/. It skips the
// test when no S3 server is configured.
func s3Corpus(t *testing.T, files map[string][]byte) (entry, prefix string) {
	t.Helper()
	cfg := storetest.S3Config(t)
	st := storetest.OpenS3(t, cfg)
	endpoint, bucket := cfg.Endpoint, cfg.Bucket
	prefix = cfg.Prefix
	ctx := context.Background()
	for name, data := range files {
		if err := st.Put(ctx, name, data); err != nil {
			t.Fatal(err)
		}
	}
	q := "endpoint=" + endpoint + "&region=us-east-1&path_style=true&access_key_env=AWS_ACCESS_KEY_ID&secret_key_env=AWS_SECRET_ACCESS_KEY"
	return "s3://" + bucket + "/" + prefix + "/corpus/?" + q, prefix
}

// plantedFiles is the planted corpus in every supported layout, plus a
// larger random corpus that spans many ranged GETs.
func plantedFiles(t *testing.T) map[string][]byte {
	t.Helper()
	var jl bytes.Buffer
	for i, doc := range strings.Split(strings.TrimSpace(deduptest.PlantedCorpus()), "\n\n") {
		b, _ := json.Marshal(map[string]any{"id": i, "text": doc})
		jl.Write(b)
		jl.WriteString("\n")
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(jl.Bytes())
	zw.Close()
	enc, _ := zstd.NewWriter(nil)
	r := rand.New(rand.NewPCG(7, 8))
	_, docs := deduptest.RandomCase(r, 200, 3000)
	return map[string][]byte{
		"a.txt":       []byte(deduptest.PlantedCorpus()),
		"b.jsonl":     jl.Bytes(),
		"c.jsonl.gz":  gz.Bytes(),
		"d.txt.zst":   enc.EncodeAll([]byte(deduptest.PlantedCorpus()), nil),
		"random.txt":  []byte(strings.Join(docs, "\n\n") + "\n"),
		"sub/e.jsonl": jl.Bytes(),
	}
}

// TestS3CorpusMatchesLocal screens the same planted corpus from local disk
// and from the S3 server, in small shards and small ranged GETs, and wants
// the same matches (item, kind, offset, Jaccard), drops and kept SHA-256.
func TestS3CorpusMatchesLocal(t *testing.T) {
	files := plantedFiles(t)
	upload := map[string][]byte{
		"corpus2/not-under-prefix.txt":      []byte(deduptest.PlantedCorpus()),
		"corpus/.hidden/skipped.txt":        []byte(deduptest.PlantedCorpus()),
		"elsewhere/unrelated-document.text": []byte("x"),
	}
	dir := t.TempDir()
	for name, data := range files {
		upload["corpus/"+name] = data
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entry, prefix := s3Corpus(t, upload)
	ctx := context.Background()

	defer func(old int64) { S3ChunkBytes = old }(S3ChunkBytes)
	S3ChunkBytes = 4096 // many GETs per shard, and chunk edges inside documents

	local, err := Expand(ctx, []string{dir}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	remote, err := Expand(ctx, []string{entry}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(remote) != len(files) || len(local) != len(files) {
		t.Fatalf("%d S3 sources, %d local, want %d: %v", len(remote), len(local), len(files), remote)
	}
	// The entry without its trailing slash names the same folder, not "corpus2/".
	noSlash, err := Expand(ctx, []string{strings.Replace(entry, "/corpus/?", "/corpus?", 1)}, "", "")
	if err != nil || !reflect.DeepEqual(noSlash, remote) {
		t.Fatalf("entry without slash: %v %v", noSlash, err)
	}
	for i, s := range remote {
		l := local[i]
		name := strings.TrimPrefix(l.URI, dir+"/")
		if !strings.Contains(s.URI, prefix+"/corpus/"+name+"?") || s.Size != l.Size || s.Format != l.Format || s.Compression != l.Compression {
			t.Fatalf("source %d: S3 %+v, local %+v", i, s, l)
		}
		// A single-part upload's ETag is the MD5 of its bytes.
		sum := md5.Sum(files[name])
		fp, err := FingerprintSource(ctx, nil, s)
		if err != nil || fp.Size != l.Size || strings.Trim(fp.ETag, `"`) != hex.EncodeToString(sum[:]) || fp.SHA256 != "" {
			t.Fatalf("%s: fingerprint %+v %v", name, fp, err)
		}
	}

	items := deduptest.PlantedItems()
	r := rand.New(rand.NewPCG(7, 8))
	randomItems, _ := deduptest.RandomCase(r, 200, 3000) // the items planted in random.txt
	items = append(items, randomItems...)
	idx, err := dedup.NewIndex(items, dedup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	screen := func(srcs []Source, shardBytes int64) ([]dedup.Match, dedup.Report) {
		t.Helper()
		ms, _, _, err := Scanner{Index: idx}.ScanAll(ctx, Plan(srcs, shardBytes), 2)
		if err != nil {
			t.Fatal(err)
		}
		return ms, dedup.Summarize(items, ms, []dedup.Fingerprint{{URI: "x"}}, dedup.Options{})
	}
	// Offsets and kinds, without the URIs, which differ by design.
	strip := func(ms []dedup.Match) []string {
		var out []string
		for _, m := range ms {
			out = append(out, fmt.Sprintf("%s %s %d %.6f %s", m.ItemID, m.Kind, m.Offset, m.Jaccard, filepath.Base(strings.SplitN(m.URI, "?", 2)[0])))
		}
		return out
	}
	localMatches, localRep := screen(local, 0)
	for _, shardBytes := range []int64{0, 5000, 70000} {
		ms, rep := screen(remote, shardBytes)
		if !reflect.DeepEqual(strip(ms), strip(localMatches)) {
			t.Errorf("shards of %d bytes: S3 matches\n%v\nlocal\n%v", shardBytes, strip(ms), strip(localMatches))
		}
		if rep.KeptSHA256 != localRep.KeptSHA256 || rep.Dropped != localRep.Dropped {
			t.Errorf("shards of %d bytes: kept sha %s (%d dropped), local %s (%d)", shardBytes, rep.KeptSHA256, rep.Dropped, localRep.KeptSHA256, localRep.Dropped)
		}
	}
	// The planted cases are found as TestPlantedContamination specifies, and
	// the random corpus contributes matches too.
	kinds := matchKinds(localMatches)
	for id, want := range map[string]string{"exact": dedup.KindExact, "spacing": dedup.KindExact, "para_above": dedup.KindJaccard, "short_line": dedup.KindWhole, "task1b": dedup.KindExact} {
		if kinds[id] != want {
			t.Errorf("%s: kind %q, want %q", id, kinds[id], want)
		}
	}
	if _, found := kinds["para_below"]; found || len(kinds) < 12 {
		t.Errorf("matches %v", kinds)
	}
}

// TestS3ShardResumes kills a shard of an S3 object mid-way and resumes it
// from the heartbeated checkpoint: the result equals an uninterrupted scan.
// A source whose ETag no longer matches is refused.
func TestS3ShardResumes(t *testing.T) {
	files := plantedFiles(t)
	entry, _ := s3Corpus(t, map[string][]byte{"corpus/random.txt": files["random.txt"]})
	ctx := context.Background()
	defer func(old int64) { S3ChunkBytes = old }(S3ChunkBytes)
	S3ChunkBytes = 8192

	srcs, err := Expand(ctx, []string{entry}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	items, _ := deduptest.RandomCase(r, 200, 3000)
	idx, _ := dedup.NewIndex(items, dedup.Options{})
	shards := Plan(srcs, int64(len(files["random.txt"])+1)/2)
	if len(shards) != 2 {
		t.Fatalf("plan %v", shards)
	}
	sh := shards[1]
	sc := Scanner{Index: idx, ProgressEvery: 3000}
	full, err := sc.ScanShard(ctx, sh, Checkpoint{}, nil)
	if err != nil || len(full.Matches) == 0 {
		t.Fatalf("full scan: %d matches, %v", len(full.Matches), err)
	}
	for _, killAt := range []int{1, 7} {
		kctx, cancel := context.WithCancel(ctx)
		var last Checkpoint
		beats := 0
		_, err := sc.ScanShard(kctx, sh, Checkpoint{}, func(c Checkpoint) {
			if beats++; beats == killAt {
				last = c
				cancel()
			}
		})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("killed scan: err = %v", err)
		}
		b, _ := json.Marshal(last)
		var cp Checkpoint
		json.Unmarshal(b, &cp)
		if cp.Offset <= sh.Start || cp.Offset >= sh.End {
			t.Fatalf("checkpoint offset %d outside shard %s", cp.Offset, sh)
		}
		res, err := sc.ScanShard(ctx, sh, cp, nil)
		if err != nil || !reflect.DeepEqual(res, full) {
			t.Errorf("killed at beat %d (offset %d): resumed %d matches %d docs, want %d matches %d docs (%v)",
				killAt, cp.Offset, len(res.Matches), res.Docs, len(full.Matches), full.Docs, err)
		}
	}

	stale := sh
	stale.Source.ETag = `"0123456789abcdef0123456789abcdef"`
	if _, err := sc.ScanShard(ctx, stale, Checkpoint{}, nil); err == nil || !strings.Contains(err.Error(), "changed since the corpus was listed") {
		t.Errorf("stale ETag: err = %v", err)
	}
	if _, err := Expand(ctx, []string{strings.Replace(entry, "/corpus/?", "/nothing-here/?", 1)}, "", ""); err == nil || !strings.Contains(err.Error(), "no objects") {
		t.Errorf("empty prefix: err = %v", err)
	}
	if _, err := Expand(ctx, []string{strings.Replace(entry, "region=", "regoin=", 1)}, "", ""); err == nil || !strings.Contains(err.Error(), `unknown parameter "regoin"`) {
		t.Errorf("misspelt parameter: err = %v", err)
	}
}

// breakingTransport counts the bytes of ranged responses and, when
// breaking, cuts every other one short.
type breakingTransport struct {
	breaking bool
	n        atomic.Int32
	broken   atomic.Int32
	bytes    atomic.Int64
}

func (b *breakingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Header.Get("Range") == "" {
		return resp, err
	}
	b.bytes.Add(resp.ContentLength)
	if !b.breaking || b.n.Add(1)%2 == 0 {
		return resp, err
	}
	b.broken.Add(1)
	resp.Body = &shortBody{rc: resp.Body, left: 1000}
	return resp, nil
}

// withTransport makes the S3 clients created until the returned func is
// called use rt.
func withTransport(rt http.RoundTripper) func() {
	s3Clients.Lock()
	old := s3Clients.m
	s3Clients.m = nil
	s3Clients.Unlock()
	s3HTTPClient = &http.Client{Transport: rt}
	return func() {
		s3HTTPClient = nil
		s3Clients.Lock()
		s3Clients.m = old
		s3Clients.Unlock()
	}
}

type shortBody struct {
	rc   io.ReadCloser
	left int
}

func (s *shortBody) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, errors.New("connection reset by test")
	}
	n, err := s.rc.Read(p[:min(len(p), s.left)])
	s.left -= n
	return n, err
}

func (s *shortBody) Close() error { return s.rc.Close() }

// TestS3BrokenBodiesResume: response bodies that break off are re-requested
// from the byte reached; the screen is the same as with a sound connection.
func TestS3BrokenBodiesResume(t *testing.T) {
	files := plantedFiles(t)
	entry, _ := s3Corpus(t, map[string][]byte{"corpus/random.txt": files["random.txt"]})
	ctx := context.Background()
	defer func(old int64) { S3ChunkBytes = old }(S3ChunkBytes)
	S3ChunkBytes = 20000
	r := rand.New(rand.NewPCG(7, 8))
	items, _ := deduptest.RandomCase(r, 200, 3000)
	idx, _ := dedup.NewIndex(items, dedup.Options{})
	screen := func() []dedup.Match {
		t.Helper()
		srcs, err := Expand(ctx, []string{entry}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		ms, _, _, err := Scanner{Index: idx}.ScanAll(ctx, Plan(srcs, 50000), 2)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	want := screen()

	bt := &breakingTransport{breaking: true}
	defer withTransport(bt)()
	got := screen()
	if bt.broken.Load() < 10 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d bodies broken; %d matches, want %d", bt.broken.Load(), len(got), len(want))
	}
}

// TestS3ShardsFetchLittleBeyondTheirEnd: each shard reads ahead in big
// chunks up to its end and in small ones after it, so a corpus cut into
// shards is fetched about once, not once plus a chunk per shard.
func TestS3ShardsFetchLittleBeyondTheirEnd(t *testing.T) {
	files := plantedFiles(t)
	data := files["random.txt"]
	entry, _ := s3Corpus(t, map[string][]byte{"corpus/random.txt": data})
	ctx := context.Background()
	defer func(chunk, tail int64) { S3ChunkBytes, S3TailBytes = chunk, tail }(S3ChunkBytes, S3TailBytes)
	S3ChunkBytes, S3TailBytes = 1<<20, 2000
	srcs, err := Expand(ctx, []string{entry}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	shards := Plan(srcs, 40000)
	idx, _ := dedup.NewIndex(deduptest.PlantedItems(), dedup.Options{})
	bt := &breakingTransport{}
	defer withTransport(bt)()
	if _, _, _, err := (Scanner{Index: idx}).ScanAll(ctx, shards, 2); err != nil {
		t.Fatal(err)
	}
	// Each shard may fetch its last document's rest plus two tail chunks.
	limit := int64(len(data)) + int64(len(shards))*(3*S3TailBytes)
	if got := bt.bytes.Load(); got < int64(len(data)) || got > limit {
		t.Errorf("%d shards fetched %d bytes of a %d-byte object, want at most %d", len(shards), got, len(data), limit)
	}
}
