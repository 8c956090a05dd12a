package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/audit"
	"github.com/glossobench/glossobench/scorers/safety"
)

// TestAuditStageCommand runs EvalRun's audit stage on a pooled axis, then
// runs the glossobench audit command each summary records on the rows the
// stage stored: the command prints the stage's numbers.
func TestAuditStageCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := json.Marshal(map[string]any{"config": config.Config{Run: config.Run{Seed: 77}}})
	r := rand.New(rand.NewPCG(77, 450))
	var items, scores bytes.Buffer
	for i := range 450 {
		ds := []string{"aegis2", "wildguardmix", "jailbreakbench"}[i%3]
		y := r.Float64() < []float64{0.7, 0.5, 0.35}[i%3]
		rating := 0.5 * r.Float64()
		if y {
			rating += 0.3
		}
		id := fmt.Sprintf("%s/%d", ds, i)
		json.NewEncoder(&items).Encode(scorers.Item{ID: id, Axis: "safety", Dataset: ds, Source: ds})
		topic := []string{"weapons", "drugs"}[i%2]
		json.NewEncoder(&scores).Encode(scorers.ItemScore{ItemID: id, Source: ds, Label: true,
			Audit: []scorers.AuditRow{{Detector: safety.DetectorHarmRating, Rating: rating, Label: y, Tags: map[string]string{"source": ds, "topic": topic}}}})
	}
	for key, b := range map[string][]byte{"runs/s/manifest.json": manifest, "runs/s/safety/items.jsonl": items.Bytes(), "runs/s/safety/scores.jsonl": scores.Bytes()} {
		if err := st.Put(ctx, key, b); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := activities.New(zerolog.Nop()).Audit(ctx, activities.AxisInput{RunRef: activities.RunRef{RunID: "s", StoreURI: dir}, Axis: "safety"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Pools) != 1 || sum.Design.Source != "source" || sum.Pools[0].Design.Source != "topic" {
		t.Fatalf("want the harm rating pooled by source and by topic: %+v", sum)
	}
	var all []activities.AuditSummary
	for _, p := range append([]activities.AuditSummary{sum}, sum.Pools...) {
		if len(p.Trained) != 2 {
			t.Fatalf("want the half-and-half rating and two trained detectors, got %+v", p)
		}
		if !strings.Contains(p.Command, " --label prompt_harmful --source "+p.Design.Source+" --measurements harm_rating ") {
			t.Errorf("command %q does not name the pool's label, source and detector", p.Command)
		}
		all = append(all, p)
		all = append(all, p.Trained...)
	}
	for _, s := range all {
		args := strings.Fields(s.Command)
		if len(args) < 3 || args[0] != "glossobench" || args[1] != "audit" {
			t.Fatalf("%s: command %q", s.Detector, s.Command)
		}
		args = args[2:]
		for i := range args {
			if i > 0 && args[i-1] == "--data" {
				args[i] = filepath.Join(dir, filepath.FromSlash(args[i])) // the key is relative to the store
			}
		}
		var out, errb bytes.Buffer
		if code := auditMain(append(args, "--json"), &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", s.Detector, code, errb.String())
		}
		var rep audit.Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Detector != s.Detector || rep.Headline != *s.Headline || rep.CI95 != *s.CI95 || rep.MeasurementsOnly != *s.MeasurementsOnly ||
			rep.SourceOnly != *s.SourceOnly || rep.L != *s.L || rep.Verdict != s.Verdict || rep.Shuffle == nil || *rep.Shuffle != *s.Shuffle {
			t.Errorf("%s: the command prints headline %v %v, measurements-only %v, source-only %v, L %v, %q, shuffles %+v; the stage has %v %v, %v, %v, %v, %q, %+v",
				s.Detector, rep.Headline, rep.CI95, rep.MeasurementsOnly, rep.SourceOnly, rep.L, rep.Verdict, rep.Shuffle,
				*s.Headline, *s.CI95, *s.MeasurementsOnly, *s.SourceOnly, *s.L, s.Verdict, *s.Shuffle)
		}
	}
}
