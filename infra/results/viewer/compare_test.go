package viewer

import (
	"cmp"
	"html"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/glossobench/glossobench/activities/fakerun"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/stats"
)

// compareRow is one axis row of the compare page, as shown.
type compareRow struct {
	axis, metric                   string
	shared, onlyA, onlyB, disagree int
	a, b, delta, lo, hi, p         float64
	hasStat                        bool
}

var compareRowRE = regexp.MustCompile(`<tr class="axis" data-axis="([^"]+)"><td>[^<]*</td><td>([^<]*)</td><td class="num shared">(\d+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num disagree">(\d+)</td><td class="num stat-a" data-value="([^"]*)">[^<]*</td><td class="num stat-b" data-value="([^"]*)">[^<]*</td><td class="num delta" data-value="([^"]*)">[^<]*</td><td class="num ci" data-lo="([^"]*)" data-hi="([^"]*)">[^<]*</td><td class="num p" data-value="([^"]*)">`)

func compareRows(t *testing.T, doc string) map[string]compareRow {
	t.Helper()
	rows := map[string]compareRow{}
	for _, m := range compareRowRE.FindAllStringSubmatch(doc, -1) {
		atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
		r := compareRow{axis: m[1], metric: html.UnescapeString(m[2]), shared: atoi(m[3]), onlyA: atoi(m[4]), onlyB: atoi(m[5]), disagree: atoi(m[6]), hasStat: m[7] != ""}
		for i, f := range []*float64{&r.a, &r.b, &r.delta, &r.lo, &r.hi, &r.p} {
			if m[7+i] == "" {
				continue
			}
			v, err := strconv.ParseFloat(m[7+i], 64)
			if err != nil {
				t.Fatalf("axis %s: %q: %v", m[1], m[7+i], err)
			}
			*f = v
		}
		rows[r.axis] = r
	}
	return rows
}

func readRunResult(t *testing.T, dir, run string) runfiles.Result {
	t.Helper()
	f, err := runfiles.Dir(filepath.Join(dir, "runs", run))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := f.Result()
	if err != nil {
		t.Fatal(err)
	}
	return *r
}

// TestCompareHeadlines: two runs compared on their shared items show, per
// axis, the counts of the test's own reading of both scores.jsonl, and each
// run's headline statistic, the paired difference, interval and p that
// sigtest's computation gives on those items: the axes' registered
// statistics over the shared items in id order, all axes in one
// stats.CompareStatistics call with sigtest's defaults (2000 resamples,
// seed 1, 95%).
func TestCompareHeadlines(t *testing.T) {
	dir := fakeStore(t, 10)
	if _, err := fakerun.WriteRun(dir, fakerun.Options{RunID: "run-b", Shift: 1}); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, dir)
	rows := compareRows(t, get(t, srv.URL+"/compare?a=fake-run&b=run-b"))
	if len(rows) != 5 {
		t.Fatalf("%d axes compared, want the 5 both runs scored", len(rows))
	}
	ra, rb := readRunResult(t, dir, "fake-run"), readRunResult(t, dir, "run-b")
	var paired []stats.PairedTerms
	anyDisagree, anyDelta := false, false
	for _, axis := range slices.Sorted(mapKeys(rows)) {
		got := rows[axis]
		a := readScores(t, filepath.Join(dir, "runs", "fake-run", axis, "scores.jsonl"))
		b := readScores(t, filepath.Join(dir, "runs", "run-b", axis, "scores.jsonl"))
		byID := map[string]scorers.ItemScore{}
		for _, s := range a {
			byID[s.ItemID] = s
		}
		var ids []string
		disagree := 0
		bByID := map[string]scorers.ItemScore{}
		for _, s := range b {
			if sa, ok := byID[s.ItemID]; ok {
				ids = append(ids, s.ItemID)
				bByID[s.ItemID] = s
				if s.Score != sa.Score {
					disagree++
				}
			}
		}
		if got.shared != len(ids) || got.onlyA != len(a)-len(ids) || got.onlyB != len(b)-len(ids) || got.disagree != disagree {
			t.Errorf("%s: shared/onlyA/onlyB/disagree %d/%d/%d/%d, want %d/%d/%d/%d", axis, got.shared, got.onlyA, got.onlyB, got.disagree, len(ids), len(a)-len(ids), len(b)-len(ids), disagree)
		}
		anyDisagree = anyDisagree || disagree > 0
		metric := ra.Axes[axis].Metric
		if got.metric != metric {
			t.Errorf("%s: statistic %q, the axis publishes %q", axis, got.metric, metric)
		}
		st, ok := scorers.StatisticOf(metric)
		if !ok {
			t.Fatalf("%s: metric %q has no statistic", axis, metric)
		}
		slices.Sort(ids)
		var sa, sb []scorers.ItemScore
		for _, id := range ids {
			sa, sb = append(sa, byID[id]), append(sb, bByID[id])
		}
		pt := stats.PairedTerms{Name: axis, Weight: cmp.Or(ra.Axes[axis].Weight, rb.Axes[axis].Weight), Value: st.Value}
		var err error
		if pt.A, err = st.TermsOf(sa); err != nil {
			t.Fatal(err)
		}
		if pt.B, err = st.TermsOf(sb); err != nil {
			t.Fatal(err)
		}
		paired = append(paired, pt)
	}
	// sigtest's two calls: the axes of both runs' ms_public, then the rest.
	var ms, rest []stats.PairedTerms
	for _, pt := range paired {
		if slices.Contains(ra.Summary.MSAxes, pt.Name) && slices.Contains(rb.Summary.MSAxes, pt.Name) {
			ms = append(ms, pt)
		} else {
			rest = append(rest, pt)
		}
	}
	var want []stats.Difference
	for _, group := range [][]stats.PairedTerms{ms, rest} {
		if len(group) > 0 {
			d, _, err := stats.CompareStatistics(group, 2000, 1, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, d...)
		}
	}
	t.Logf("ms_public axes %d, others %d", len(ms), len(rest))
	for _, d := range want {
		got := rows[d.Name]
		if !got.hasStat || got.a != d.A || got.b != d.B || got.delta != d.Delta || got.lo != d.Lo || got.hi != d.Hi || got.p != d.P {
			t.Errorf("%s: a %v b %v a−b %v [%v, %v] p %v; sigtest's computation gives %v %v %v [%v, %v] %v",
				d.Name, got.a, got.b, got.delta, got.lo, got.hi, got.p, d.A, d.B, d.Delta, d.Lo, d.Hi, d.P)
		}
		anyDelta = anyDelta || d.Delta != 0
	}
	if !anyDisagree || !anyDelta {
		t.Fatal("the two fake runs agree everywhere; the test checks nothing")
	}
}

// TestCompareWithItself: a run compared with itself shows every axis's
// result.json headline for both sides (all its items are shared), a zero
// difference with a zero-width interval, and p = 1.
func TestCompareWithItself(t *testing.T) {
	dir := fakeStore(t, 10)
	srv := serve(t, dir)
	rows := compareRows(t, get(t, srv.URL+"/compare?a=fake-run&b=fake-run"))
	res := readRunResult(t, dir, "fake-run")
	n := 0
	for axis, ax := range res.Axes {
		if ax.Score == nil {
			continue
		}
		n++
		got, ok := rows[axis]
		if !ok || !got.hasStat {
			t.Errorf("%s: no statistic on the compare page", axis)
			continue
		}
		// The page sums the items in id order, the run in its own order.
		if math.Abs(got.a-*ax.Score) > 1e-12 || got.b != got.a {
			t.Errorf("%s: a %v b %v, result.json score %v", axis, got.a, got.b, *ax.Score)
		}
		if got.delta != 0 || got.lo != 0 || got.hi != 0 || got.p != 1 || got.disagree != 0 || got.shared != ax.N {
			t.Errorf("%s: a−b %v [%v, %v] p %v, %d disagree, %d shared (n %d)", axis, got.delta, got.lo, got.hi, got.p, got.disagree, got.shared, ax.N)
		}
	}
	if n < 3 {
		t.Fatalf("only %d scored axes in the fake run", n)
	}
}
