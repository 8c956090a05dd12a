package leaderboard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/infra/store/storetest"
)

// stores runs fn against a local store and, when CI provides one, a live
// S3-compatible server.
func stores(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Run("local", func(t *testing.T) {
		st, err := store.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		fn(t, st)
	})
	t.Run("s3", func(t *testing.T) { fn(t, storetest.S3(t)) })
}

func row(model string, pins map[string]string, ms float64) Row {
	return Row{
		ModelID:       model,
		Pins:          pins,
		ModelMeta:     ModelMeta{Family: "llama", ModelClass: "instruct", Params: "172k"},
		ReasoningMode: "off",
		Scores:        map[string]float64{"knowledge": ms, "nlu": ms / 2},
		MS:            ms,
		MSCI95:        []float64{ms - 0.1, ms + 0.1},
		BenchVersion:  "1.0.0",
	}
}

var pinsA = map[string]string{"model_sha": "aaaa", "bench_version": "1.0.0"}

func TestAppendRead(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		if rows, err := Read(ctx, st, "ms", 1); err != nil || len(rows) != 0 {
			t.Fatalf("empty leaderboard Read = %v, %v", rows, err)
		}
		want := []Row{row("m1", pinsA, 0.5), row("m2", pinsA, 0.25), row("m3", nil, 0.75)}
		for _, r := range want {
			if err := Append(ctx, st, "ms", 1, r); err != nil {
				t.Fatal(err)
			}
		}
		got, err := Read(ctx, st, "ms", 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("Read returned %d rows, want %d", len(got), len(want))
		}
		for i := range want {
			g := got[i]
			if g.Seq != i || g.ModelID != want[i].ModelID || g.MS != want[i].MS || g.AppendedAt.IsZero() ||
				g.ModelMeta != want[i].ModelMeta || g.Scores["nlu"] != want[i].Scores["nlu"] {
				t.Errorf("row %d = %+v, want %+v with seq %d", i, g, want[i], i)
			}
		}
		// Other languages and major versions are separate boards.
		if rows, err := Read(ctx, st, "ms", 2); err != nil || len(rows) != 0 {
			t.Errorf("v2 Read = %d rows, %v; want none: v2 never sees v1", len(rows), err)
		}
		if rows, err := Read(ctx, st, "id", 1); err != nil || len(rows) != 0 {
			t.Errorf("id Read = %d rows, %v; want none", len(rows), err)
		}
		keys, _ := st.List(ctx, "leaderboard/ms/v1/rows/")
		for i, k := range keys {
			if !strings.HasPrefix(k, fmt.Sprintf("leaderboard/ms/v1/rows/%06d-", i)) || !strings.HasSuffix(k, ".json") {
				t.Errorf("row object %d is named %s", i, k)
			}
		}
	})
}

func TestDuplicateRefused(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		if err := Append(ctx, st, "ms", 1, row("m1", pinsA, 0.5)); err != nil {
			t.Fatal(err)
		}
		// Same identity, different scores: still a duplicate.
		err := Append(ctx, st, "ms", 1, row("m1", map[string]string{"bench_version": "1.0.0", "model_sha": "aaaa"}, 0.9))
		if !errors.Is(err, ErrDuplicate) {
			t.Fatalf("duplicate append = %v, want ErrDuplicate", err)
		}
		if !strings.Contains(err.Error(), "m1") {
			t.Errorf("error %q does not name the model", err)
		}
		// Nil and empty pins are the same identity.
		if err := Append(ctx, st, "ms", 1, row("m2", nil, 0.1)); err != nil {
			t.Fatal(err)
		}
		if err := Append(ctx, st, "ms", 1, row("m2", map[string]string{}, 0.1)); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("empty-pins duplicate of nil pins = %v, want ErrDuplicate", err)
		}
		// A new pin value is a new row.
		if err := Append(ctx, st, "ms", 1, row("m1", map[string]string{"model_sha": "bbbb", "bench_version": "1.0.0"}, 0.6)); err != nil {
			t.Fatalf("append with new pins: %v", err)
		}
		rows, err := Read(ctx, st, "ms", 1)
		if err != nil || len(rows) != 3 {
			t.Fatalf("Read = %d rows, %v; want 3", len(rows), err)
		}
		if rows[0].MS != 0.5 {
			t.Errorf("row 0 ms = %v after a refused duplicate, want the original 0.5", rows[0].MS)
		}
	})
}

// race runs fn(0) … fn(n-1) on n goroutines released at once and returns
// their errors by i.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// TestConcurrentAppends races appenders: every distinct row lands exactly
// once on its own line, and same-identity racers yield one row.
func TestConcurrentAppends(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		for _, n := range []int{2, 6} {
			lang := fmt.Sprintf("race%d", n)
			errs := race(n, func(i int) error {
				return Append(ctx, st, lang, 1, row(fmt.Sprintf("model-%d", i), pinsA, float64(i)/10))
			})
			for i, err := range errs {
				if err != nil {
					t.Fatalf("n=%d: append %d: %v", n, i, err)
				}
			}
			var buf bytes.Buffer
			if err := Export(ctx, st, lang, 1, &buf); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if len(lines) != n {
				t.Fatalf("n=%d: export has %d lines, want %d:\n%s", n, len(lines), n, buf.String())
			}
			seen := map[string]bool{}
			for i, line := range lines {
				var r Row
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if r.Seq != i {
					t.Errorf("line %d has seq %d", i+1, r.Seq)
				}
				if seen[r.ModelID] {
					t.Errorf("model %s appears twice", r.ModelID)
				}
				seen[r.ModelID] = true
			}
		}

		// Racers with one identity: exactly one lands.
		const n = 4
		errs := race(n, func(i int) error { return Append(ctx, st, "dup", 1, row("same", pinsA, float64(i))) })
		ok := 0
		for i, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, ErrDuplicate):
				t.Fatalf("same-identity racer %d: %v", i, err)
			}
		}
		rows, err := Read(ctx, st, "dup", 1)
		if ok != 1 || err != nil || len(rows) != 1 {
			t.Fatalf("same-identity race: %d succeeded, Read = %d rows, %v; want 1 and 1", ok, len(rows), err)
		}
	})
}

// TestExportOnlyGrows checks the append-only promise on the materialised
// file: an earlier export is a byte prefix of every later one.
func TestExportOnlyGrows(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		var prev []byte
		for i := range 4 {
			if err := Append(ctx, st, "ms", 1, row(fmt.Sprintf("m%d", i), pinsA, 0.1*float64(i))); err != nil {
				t.Fatal(err)
			}
			if i == 2 {
				_ = Append(ctx, st, "ms", 1, row("m0", pinsA, 0.9)) // refused duplicate
			}
			var buf bytes.Buffer
			if err := Export(ctx, st, "ms", 1, &buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(buf.Bytes(), prev) {
				t.Fatalf("export after append %d rewrote earlier lines:\nbefore:\n%s\nafter:\n%s", i, prev, buf.Bytes())
			}
			if got := bytes.Count(buf.Bytes(), []byte("\n")); got != i+1 {
				t.Fatalf("export after append %d has %d lines", i, got)
			}
			prev = buf.Bytes()
		}
	})
}

// TestTamperDetected alters the row objects behind Append's back and checks
// that Read refuses the leaderboard, naming the object.
func TestTamperDetected(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) *store.Local {
		st, err := store.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := Append(ctx, st, "ms", 1, row(fmt.Sprintf("m%d", i), pinsA, 0.5)); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	rowFile := func(t *testing.T, st *store.Local, seq int) string {
		m, _ := filepath.Glob(filepath.Join(st.Dir(), "leaderboard/ms/v1/rows", fmt.Sprintf("%06d-*.json", seq)))
		if len(m) != 1 {
			t.Fatalf("row %d files: %q", seq, m)
		}
		return m[0]
	}
	// rowData is the file holding row seq's fields, wherever the layout
	// keeps them.
	rowData := func(t *testing.T, st *store.Local, seq int) string {
		var found []string
		filepath.WalkDir(filepath.Join(st.Dir(), "leaderboard/ms/v1"), func(path string, d os.DirEntry, err error) error {
			if data, _ := os.ReadFile(path); err == nil && !d.IsDir() && bytes.Contains(data, []byte(fmt.Sprintf(`"seq":%d,`, seq))) {
				found = append(found, path)
			}
			return nil
		})
		if len(found) != 1 {
			t.Fatalf("row %d data files: %q", seq, found)
		}
		return found[0]
	}
	t.Run("removed", func(t *testing.T) {
		st := setup(t)
		os.Remove(rowFile(t, st, 1))
		if _, err := Read(ctx, st, "ms", 1); err == nil || !strings.Contains(err.Error(), "000002-") {
			t.Fatalf("Read with row 1 removed = %v, want an error naming row 2's object", err)
		}
	})
	for _, seq := range []int{0, 2} {
		// Every row is verified on read, the newest (2) included, and
		// nothing is appended onto an edited row.
		t.Run(fmt.Sprintf("edited row %d", seq), func(t *testing.T) {
			st := setup(t)
			f := rowData(t, st, seq)
			data, _ := os.ReadFile(f)
			os.WriteFile(f, bytes.Replace(data, []byte(`"ms":0.5`), []byte(`"ms":0.9`), 1), 0o644)
			if _, err := Read(ctx, st, "ms", 1); err == nil || !strings.Contains(err.Error(), "edited") || !errors.Is(err, ErrAltered) {
				t.Fatalf("Read with row %d edited = %v, want an error saying it was edited", seq, err)
			}
			if err := Append(ctx, st, "ms", 1, row("next", pinsA, 0.1)); err == nil {
				t.Fatalf("Append onto a leaderboard whose row %d was edited succeeded", seq)
			}
			if err := Export(ctx, st, "ms", 1, io.Discard); err == nil {
				t.Fatalf("Export of a leaderboard whose row %d was edited succeeded", seq)
			}
		})
	}
	t.Run("slot repointed", func(t *testing.T) {
		st := setup(t)
		os.WriteFile(rowFile(t, st, 2), []byte(`{"row_sha256":"`+strings.Repeat("ab", 32)+`"}`), 0o644)
		if _, err := Read(ctx, st, "ms", 1); err == nil || !strings.Contains(err.Error(), "not there") {
			t.Fatalf("Read with slot 2 pointing nowhere = %v", err)
		}
	})
	t.Run("foreign", func(t *testing.T) {
		st := setup(t)
		st.Put(ctx, "leaderboard/ms/v1/rows/notes.txt", []byte("hi"))
		if _, err := Read(ctx, st, "ms", 1); err == nil || !strings.Contains(err.Error(), "notes.txt") {
			t.Fatalf("Read with a foreign object = %v, want an error naming it", err)
		}
	})
	t.Run("forked", func(t *testing.T) {
		st := setup(t)
		st.Put(ctx, "leaderboard/ms/v1/rows/000001-00000000.json", []byte("{}"))
		if _, err := Read(ctx, st, "ms", 1); err == nil {
			t.Fatal("Read with two rows at seq 1 succeeded")
		}
		if err := Append(ctx, st, "ms", 1, row("new", pinsA, 0.1)); err == nil {
			t.Fatal("Append onto a forked leaderboard succeeded")
		}
	})
}

func TestInvalidInput(t *testing.T) {
	ctx := context.Background()
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good := row("m", pinsA, 0.5)
	for name, tc := range map[string]struct {
		lang  string
		major int
		r     Row
		want  string
	}{
		"traversal lang": {"../x", 1, good, "language"},
		"slash lang":     {"ms/x", 1, good, "language"},
		"empty lang":     {"", 1, good, "language"},
		"major 0":        {"ms", 0, good, "major"},
		"empty model":    {"ms", 1, Row{}, "model_id"},
		"nan score":      {"ms", 1, func() Row { r := row("m", pinsA, 0.5); r.Scores["nlu"] = math.NaN(); return r }(), "scores.nlu"},
		"inf ms":         {"ms", 1, func() Row { r := row("m", pinsA, 0.5); r.MS = math.Inf(1); return r }(), "ms"},
		"bad ci":         {"ms", 1, func() Row { r := row("m", pinsA, 0.5); r.MSCI95 = []float64{0.6, 0.4}; return r }(), "ms_ci95"},
	} {
		err := Append(ctx, st, tc.lang, tc.major, tc.r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Append = %v, want an error mentioning %q", name, err, tc.want)
		}
	}
	if keys, _ := st.List(ctx, ""); len(keys) != 0 {
		t.Errorf("refused appends stored %q", keys)
	}
}

func TestByClass(t *testing.T) {
	a, b, c := row("a", nil, 1), row("b", nil, 2), row("c", nil, 3)
	b.ModelMeta.ModelClass = "base"
	c.ModelMeta.ModelClass = ""
	got := ByClass([]Row{a, b, c})
	if len(got["instruct"]) != 1 || got["instruct"][0].ModelID != "a" || len(got["base"]) != 1 || len(got["unspecified"]) != 1 {
		t.Fatalf("ByClass = %+v", got)
	}
}

func TestAppendedAtKept(t *testing.T) {
	ctx := context.Background()
	st, _ := store.NewLocal(t.TempDir())
	r := row("m", pinsA, 0.5)
	r.AppendedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := Append(ctx, st, "ms", 1, r); err != nil {
		t.Fatal(err)
	}
	rows, _ := Read(ctx, st, "ms", 1)
	if len(rows) != 1 || !rows[0].AppendedAt.Equal(r.AppendedAt) {
		t.Fatalf("AppendedAt = %v, want %v", rows, r.AppendedAt)
	}
}

// FuzzRead stores arbitrary bytes as row 0 and checks Read reports an error
// or a valid row, never panics.
func FuzzRead(f *testing.F) {
	valid, _ := json.Marshal(row("m", pinsA, 0.5))
	for _, s := range []string{string(valid), "{}", `{"seq":0,"model_id":"m"}`, `{"seq":1,"model_id":"m"}`, `{"scores":{"a":"x"}}`, "", "null", "[]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		st, err := store.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, rowKey("ms", 1, 0, genesis("ms", 1)), data); err != nil {
			t.Fatal(err)
		}
		rows, err := Read(ctx, st, "ms", 1)
		if err != nil {
			return
		}
		if len(rows) != 1 || rows[0].Validate() != nil {
			t.Fatalf("Read accepted %q as %+v", data, rows)
		}
	})
}

func FuzzParseRowName(f *testing.F) {
	for _, s := range []string{"000000-0123abcd.json", "1234567-deadbeef.json", "000001-XYZ.json", "x.json", "-.json", "0000000-00000000.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		seq, err := parseRowName(name)
		if err != nil {
			return
		}
		if seq < 0 {
			t.Fatalf("parseRowName(%q) = %d", name, seq)
		}
		// An accepted name is the canonical one for its seq.
		if got := fmt.Sprintf("%06d-%s", seq, name[strings.Index(name, "-")+1:]); got != name {
			t.Fatalf("parseRowName accepted non-canonical %q (canonical %q)", name, got)
		}
	})
}

// Each line of the exported leaderboard.jsonl is a row object's bytes: its
// SHA-256 names the object, so a reader of the file alone can check a line
// against the store. Publish keeps the store's leaderboard.jsonl equal to
// the export, on local disk and S3.
func TestExportLinesNameTheirRowsAndPublish(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		for i := range 3 {
			if err := Append(ctx, st, "ms", 1, row(fmt.Sprintf("m<%d>&", i), pinsA, 0.25)); err != nil {
				t.Fatal(err)
			}
			if err := Publish(ctx, st, "ms", 1); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := Export(ctx, st, "ms", 1, &buf); err != nil {
				t.Fatal(err)
			}
			published, err := st.Get(ctx, JSONLPath("ms", 1))
			if err != nil || !bytes.Equal(published, buf.Bytes()) {
				t.Fatalf("after append %d the store's leaderboard.jsonl is\n%s\nwant the export\n%s(%v)", i, published, buf.Bytes(), err)
			}
			lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
			if len(lines) != i+1 {
				t.Fatalf("export has %d lines after %d appends", len(lines), i+1)
			}
			for j, line := range lines {
				sum := sha256.Sum256(line)
				got, err := st.Get(ctx, "leaderboard/ms/v1/by-hash/"+hex.EncodeToString(sum[:])+".json")
				if err != nil || !bytes.Equal(got, line) {
					t.Fatalf("line %d does not name its row object: %v", j, err)
				}
			}
		}
	})
}

// A leaderboard written before rows were named by their hash (the row in the
// slot object) still reads; the next append writes the new form onto it and
// the whole board verifies.
func TestLegacyRowsRead(t *testing.T) {
	ctx := context.Background()
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prev := genesis("ms", 1)
	for i := range 2 {
		r := row(fmt.Sprintf("old%d", i), pinsA, 0.5)
		r.Seq = i
		data, _ := json.Marshal(&r)
		if err := st.Put(ctx, rowKey("ms", 1, i, prev), data); err != nil {
			t.Fatal(err)
		}
		prev = sha256.Sum256(data)
	}
	if err := Append(ctx, st, "ms", 1, row("new", pinsA, 0.75)); err != nil {
		t.Fatal(err)
	}
	rows, err := Read(ctx, st, "ms", 1)
	if err != nil || len(rows) != 3 || rows[0].ModelID != "old0" || rows[2].ModelID != "new" || rows[2].Seq != 2 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	// The legacy row 1 is now covered by row 2's slot hash.
	f, _ := filepath.Glob(filepath.Join(st.Dir(), "leaderboard/ms/v1/rows/000001-*.json"))
	data, _ := os.ReadFile(f[0])
	os.WriteFile(f[0], bytes.Replace(data, []byte(`"ms":0.5`), []byte(`"ms":0.9`), 1), 0o644)
	if _, err := Read(ctx, st, "ms", 1); err == nil {
		t.Fatal("an edited legacy row under a newer row went unnoticed")
	}
}
