package viewer

import (
	"context"
	"html"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/internal/pagetest"

	"github.com/glossobench/glossobench/activities/fakerun"
	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/infra/store/storetest"
)

// TestViewerOverS3: over an S3 store (versitygw: .ci/versitygw.sh) the
// viewer serves the same pages as over a local folder holding the same
// objects (the runs list, a run, its report, a 5,000-item axis paged and
// filtered, an item search, compare, the leaderboard), and the S3 pages'
// numbers are result.json's. Skips without GLOSSOBENCH_S3_ENDPOINT.
func TestViewerOverS3(t *testing.T) {
	s3 := storetest.S3(t)
	ctx := context.Background()
	dir := fakeStore(t, 5000)
	if _, err := fakerun.WriteRun(dir, fakerun.Options{RunID: "run-b", Shift: 1}); err != nil {
		t.Fatal(err)
	}
	local, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	objects := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		objects++
		return s3.Put(ctx, filepath.ToSlash(rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The leaderboard is appended to each store, S3's by its create-only writes.
	for _, r := range []leaderboard.Row{
		{ModelID: "m-low", ModelMeta: leaderboard.ModelMeta{ModelClass: "base"}, MS: 0.2, Scores: map[string]float64{"nlu": 0.3}, Pins: map[string]string{"bench_version": "v1"}},
		{ModelID: "m-inst", ModelMeta: leaderboard.ModelMeta{ModelClass: "instruct"}, MS: 0.4, Scores: map[string]float64{"nlu": 0.5}, Pins: map[string]string{"bench_version": "v1"}},
	} {
		for _, st := range []store.Store{local, s3} {
			if err := leaderboard.Append(ctx, st, "ms", 1, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d objects copied to %s", objects, s3.Describe())

	ls, ss := httptest.NewServer(New(local)), httptest.NewServer(New(s3))
	defer ls.Close()
	defer ss.Close()
	for _, u := range []string{
		"/",
		"/run/fake-run/",
		"/run/fake-run/report",
		"/run/fake-run/axis/big/",
		"/run/fake-run/axis/big/?page=37",
		"/run/fake-run/axis/big/?dataset=dsb&outcome=wrong&flag=truncated&page=2",
		"/run/fake-run/axis/big/?q=needle",
		"/run/fake-run/axis/knowledge/",
		"/compare?a=fake-run&b=run-b",
		"/leaderboard",
	} {
		// Only the store's name may differ (the report's footer names the
		// store the run was written to, the local folder, on both).
		norm := strings.NewReplacer(s3.Describe(), "STORE", html.EscapeString(s3.Describe()), "STORE", local.Describe(), "STORE").Replace
		want, got := norm(get(t, ls.URL+u)), norm(get(t, ss.URL+u))
		if got != want {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s over S3 differs from the local folder at byte %d:\n S3:    %.200q\n local: %.200q", u, i, got[i:], want[i:])
		} else if !strings.Contains(got, "</html>") {
			t.Errorf("%s: not a whole page: %.300s", u, got)
		}
	}
	res := resultJSON(t, dir)
	list := get(t, ss.URL+"/")
	row, _, _ := strings.Cut(list[strings.Index(list, `<tr class="run" data-run="fake-run">`):], "</tr>")
	if seen := pagetest.CheckNumbers(t, row, res); !seen["summary.ms_public"] || !seen["summary.ms_ranking"] {
		t.Errorf("the runs page over S3 lacks ms_public or ms_ranking: %v", seen)
	}
	if seen := pagetest.CheckNumbers(t, get(t, ss.URL+"/run/fake-run/"), res); len(seen) < 10 {
		t.Errorf("the run page over S3 shows %d of result.json's numbers", len(seen))
	}
}
