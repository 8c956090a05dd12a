package audit

import (
	"fmt"
	"testing"

	"github.com/glossobench/glossobench/scorers"
)

// TestPools: every row lands in the pool of each column it is tagged in, in
// the order added, and pools come out by detector then column.
func TestPools(t *testing.T) {
	var ps Pools
	for i := range 6 {
		ps.Add(scorers.AuditRow{Detector: "judge_rating", Rating: float64(i), Label: i%2 == 0, Tags: map[string]string{"judge": []string{"j1", "j2"}[i%2], "dataset": "d"}})
		ps.Add(scorers.AuditRow{Detector: "confidence", Rating: float64(i) / 10, Label: i%3 == 0, Tags: map[string]string{"source": fmt.Sprint("s", i%3), "register": map[bool]string{true: "HIGH"}[i < 2]}})
	}
	got := ps.Sorted([]string{"confidence", "judge_rating"})
	var names []string
	for _, p := range got {
		names = append(names, fmt.Sprintf("%s/%s:%d/%d", p.Detector, p.Column, p.Rows.Len(), p.Rows.Sources()))
	}
	want := "[confidence/source:6/3 confidence/register:2/1 judge_rating/judge:6/2 judge_rating/dataset:6/1]"
	if fmt.Sprint(names) != want {
		t.Fatalf("pools %v, want %s", names, want)
	}
	rows := &got[0].Rows
	for i := range rows.Len() {
		if rows.Measurement(i, 0) != float64(i)/10 || rows.Source(i) != fmt.Sprint("s", i%3) || rows.Label(i) != (i%3 == 0) {
			t.Errorf("row %d: %v %q %v", i, rows.Label(i), rows.Source(i), rows.Measurement(i, 0))
		}
	}
}
