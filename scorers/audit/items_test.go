package audit

import (
	"fmt"
	"testing"

	"github.com/glossobench/glossobench/scorers"
)

func TestAuditItems(t *testing.T) {
	var items []scorers.ItemScore
	for i := range 300 {
		src := []string{"aegis2", "wildguardmix", "jailbreakbench"}[i%3]
		y := i%5 < 2+i%3/2
		rating := 0.3
		if y == (i%7 != 0) {
			rating = 0.8
		}
		items = append(items, scorers.ItemScore{ItemID: fmt.Sprint(i), Source: src, Rating: rating, Label: y})
	}
	if !Pooled(items) || Pooled(items[:1]) {
		t.Error("Pooled")
	}
	o := quick()
	rep, err := AuditItems(items, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 300 || len(rep.Sources) != 3 || rep.Measurements[0] != RatingMeasurement || rep.Verdict == "" {
		t.Errorf("%+v", rep)
	}
	one, err := AuditItems(items[:1], o)
	if err != nil || one.Verdict == "" || one.Skip == "" {
		t.Errorf("one item: %v %+v", err, one)
	}
	items[4].Source = ""
	if _, err := AuditItems(items, o); err == nil {
		t.Error("empty source: want error")
	}
}
