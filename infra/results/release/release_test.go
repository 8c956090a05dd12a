package release_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/activities/fakerun"
	"github.com/glossobench/glossobench/infra/results/release"
	"github.com/glossobench/glossobench/scorers"
)

var update = flag.Bool("update", false, "rewrite testdata/release from the fake run")

func fakeRun(t *testing.T) *release.Run {
	t.Helper()
	dir, err := fakerun.WriteRun(t.TempDir(), fakerun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := release.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestBundleRescoresExactly(t *testing.T) {
	run := fakeRun(t)
	out := t.TempDir()
	m, err := release.Write(run, out, release.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m2, items, err := release.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if m2.ItemsSHA256 != m.ItemsSHA256 || len(items) != m.Items {
		t.Fatalf("read back %d items sha %s, wrote %d sha %s", len(items), m2.ItemsSHA256, m.Items, m.ItemsSHA256)
	}
	rep := release.Rescore(m2, items)
	if !rep.OK() {
		t.Fatalf("rescore differs: %+v", rep)
	}
	for _, c := range append(rep.Axes, rep.MS...) {
		if c.Status != release.StatusExact {
			t.Errorf("%s: status %s (%s), want exact", c.Name, c.Status, c.Detail)
		}
	}
	// Every published axis was actually checked, chrF++ included.
	if got := m.Axes["nlg"].Rescore; got != release.MethodChrF {
		t.Errorf("nlg rescore method %q", got)
	}
	for _, it := range items {
		if _, has := it.Fields["hypothesis"]; has {
			t.Errorf("%s: raw hypothesis kept without --include-raw", it.ItemID)
		}
		if it.Raw != nil {
			t.Errorf("%s: raw prediction kept without --include-raw", it.ItemID)
		}
	}
}

func TestBundleReproducible(t *testing.T) {
	run := fakeRun(t)
	a, b := t.TempDir(), t.TempDir()
	if _, err := release.Write(run, a, release.Options{}); err != nil {
		t.Fatal(err)
	}
	run2, err := release.LoadRun(run.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := release.Write(run2, b, release.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{release.ItemsFile, release.ManifestFile} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two releases of the same run", f)
		}
	}
}

func TestBundleIncludeRaw(t *testing.T) {
	run := fakeRun(t)
	out := t.TempDir()
	if _, err := release.Write(run, out, release.Options{IncludeRaw: true}); err != nil {
		t.Fatal(err)
	}
	m, items, err := release.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if !m.IncludeRaw {
		t.Error("manifest include_raw false")
	}
	raw := 0
	for _, it := range items {
		if it.Raw != nil {
			raw++
		}
		if it.Axis == "nlg" {
			if _, has := it.Fields["hypothesis"]; !has {
				t.Errorf("%s: hypothesis dropped with --include-raw", it.ItemID)
			}
		}
	}
	if raw != len(items) {
		t.Errorf("%d of %d items carry their raw prediction", raw, len(items))
	}
	if rep := release.Rescore(m, items); !rep.OK() {
		t.Errorf("rescore with raw: %+v", rep)
	}
}

// TestManifestLicences: the fake run's config states two licences; its
// other four datasets have no SOURCE note, so their licence is unknown (not
// guessed from their names, which name well-known datasets), and the most
// restrictive licence is over the two known, saying that four are unknown.
func TestManifestLicences(t *testing.T) {
	run := fakeRun(t)
	m, _, err := release.Build(run, release.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"global_mmlu_ms":        release.Unknown,
		"kalahi":                "CC-BY-4.0", // config
		"belebele_ms":           release.Unknown,
		"flores_passages":       release.Unknown,
		"ifeval":                release.Unknown,
		"ms_cultural_selfbuilt": "CC-BY-NC-SA-4.0", // config
	}
	for _, d := range m.Datasets {
		if w, ok := want[d.Name]; !ok || d.License != w {
			t.Errorf("dataset %s: licence %q from %s, want %q", d.Name, d.License, d.LicenseFrom, w)
		}
	}
	if len(m.Datasets) != len(want) {
		t.Errorf("%d datasets, want %d", len(m.Datasets), len(want))
	}
	if m.MostRestrictiveLicense != "CC-BY-NC-SA-4.0" || !slices.Equal(m.Licenses, []string{"CC-BY-NC-SA-4.0", "CC-BY-4.0"}) {
		t.Errorf("most restrictive %q of %q", m.MostRestrictiveLicense, m.Licenses)
	}
	if want := []string{"if/ifeval", "knowledge/global_mmlu_ms", "nlg/flores_passages", "nlu/belebele_ms"}; !slices.Equal(m.UnknownLicenses, want) {
		t.Errorf("unknown_licenses %q, want %q", m.UnknownLicenses, want)
	}
	if !slices.ContainsFunc(m.Notes, func(n string) bool {
		return strings.HasPrefix(n, "most_restrictive_license CC-BY-NC-SA-4.0 is over the known licences only: the licence of if/ifeval, knowledge/global_mmlu_ms, nlg/flores_passages, nlu/belebele_ms is unknown")
	}) {
		t.Errorf("no note on the unknown licences: %q", m.Notes)
	}
	if m.DedupKeptSHA256 != run.Result.Summary.Dedup.KeptSHA256 || m.DedupKeptSHA256 == "" {
		t.Errorf("dedup sha %q", m.DedupKeptSHA256)
	}
	if m.BenchVersion == "" || m.PluginVersions["nlg"] == "" {
		t.Errorf("versions missing: %q %v", m.BenchVersion, m.PluginVersions)
	}
}

// TestLicenceFromSourceNote: a dataset's licence comes from the config, else
// from the SPDX-License-Identifier line of the SOURCE note in the dataset
// file's folder (a relative path read from the config's folder), else it is
// unknown, with the reason. A Global-MMLU file named mmlu (the case of issue
// 28, labelled MIT by its name) is unknown without a note, and takes its
// note's Apache-2.0 with one.
func TestLicenceFromSourceNote(t *testing.T) {
	base := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bare/mmlu.jsonl", "{}\n")
	write("noted/mmlu.jsonl", "{}\n")
	write("noted/SOURCE.txt", "Global-MMLU, Malay split.\nLicense: Global-MMLU is Apache-2.0 (SEA-HELM code MIT).\nSPDX-License-Identifier: Apache-2.0\n")
	write("prose/flores.jsonl", "{}\n")
	write("prose/SOURCE.txt", "License CC-BY-SA-4.0 (FLORES).\n")
	write("twice/x.jsonl", "{}\n")
	write("twice/SOURCE", "SPDX-License-Identifier: MIT\nSPDX-License-Identifier: CC-BY-4.0\n")

	run := fakeRun(t)
	cases := map[string]struct {
		ds         scorers.DatasetConfig
		license    string
		fromPrefix string
	}{
		"bare":        {scorers.DatasetConfig{Name: "mmlu", Format: "global_mmlu", Path: "bare/mmlu.jsonl"}, release.Unknown, "none: the config states no licence and " + filepath.Join(base, "bare") + " has no SOURCE note"},
		"noted":       {scorers.DatasetConfig{Name: "mmlu", Format: "global_mmlu", Path: "noted/mmlu.jsonl"}, "Apache-2.0", "SOURCE note " + filepath.Join(base, "noted", "SOURCE.txt")},
		"absolute":    {scorers.DatasetConfig{Name: "mmlu", Path: filepath.Join(base, "noted/mmlu.jsonl")}, "Apache-2.0", "SOURCE note "},
		"config wins": {scorers.DatasetConfig{Name: "mmlu", Path: "noted/mmlu.jsonl", License: "CC-BY-NC-4.0"}, "CC-BY-NC-4.0", "config"},
		"prose":       {scorers.DatasetConfig{Name: "flores", Path: "prose/flores.jsonl"}, release.Unknown, "none: the config states no licence and " + filepath.Join(base, "prose", "SOURCE.txt") + " has no SPDX-License-Identifier: line"},
		"two":         {scorers.DatasetConfig{Name: "x", Path: "twice/x.jsonl"}, release.Unknown, "none: " + filepath.Join(base, "twice", "SOURCE") + " line 2: a second SPDX-License-Identifier:"},
		"remote":      {scorers.DatasetConfig{Name: "mmlu", Path: "hf://datasets/CohereForAI/Global-MMLU/ms.parquet"}, release.Unknown, "none: the config states no licence and a remote dataset"},
	}
	for name, c := range cases {
		ax := run.Config.Axes["nlu"]
		ax.BaseDir = base
		ax.Datasets = []scorers.DatasetConfig{c.ds}
		run.Config.Axes["nlu"] = ax
		m, _, err := release.Build(run, release.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got *release.Dataset
		for i, d := range m.Datasets {
			if d.Axis == "nlu" && d.Name == c.ds.Name {
				got = &m.Datasets[i]
			}
		}
		if got == nil {
			t.Fatalf("%s: no dataset nlu/%s in %+v", name, c.ds.Name, m.Datasets)
		}
		if got.License != c.license || !strings.HasPrefix(got.LicenseFrom, c.fromPrefix) {
			t.Errorf("%s: licence %q from %q, want %q from %q...", name, got.License, got.LicenseFrom, c.license, c.fromPrefix)
		}
	}
}

func TestRestrictiveness(t *testing.T) {
	order := []string{"", "CC-BY-NC-ND-4.0", "CC-BY-NC-SA-4.0", "GPL-3.0", "CC BY-SA 3.0", "CC-BY-4.0", "Apache-2.0", "CC0-1.0"}
	for i := 1; i < len(order); i++ {
		if release.Restrictiveness(order[i-1]) <= release.Restrictiveness(order[i]) {
			t.Errorf("%q should be more restrictive than %q", order[i-1], order[i])
		}
	}
	if got := release.MostRestrictive([]string{"MIT", "CC-BY-SA-4.0", "Apache-2.0"}); got != "CC-BY-SA-4.0" {
		t.Errorf("MostRestrictive = %q", got)
	}
}

// tamper rewrites the bundle with edit applied to items.jsonl and the
// manifest's checksum fixed up, as a careless editor would.
func tamper(t *testing.T, dir string, edit func([]byte) []byte) {
	t.Helper()
	m, _, err := release.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, release.ItemsFile))
	data = edit(data)
	os.WriteFile(filepath.Join(dir, release.ItemsFile), data, 0o644)
	m.ItemsSHA256 = sha(data)
	b, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(dir, release.ManifestFile), b, 0o644)
}

func TestRescoreDetectsChange(t *testing.T) {
	run := fakeRun(t)
	dir := t.TempDir()
	if _, err := release.Write(run, dir, release.Options{}); err != nil {
		t.Fatal(err)
	}
	// Flip one knowledge item from right to wrong.
	tamper(t, dir, func(b []byte) []byte {
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			if strings.Contains(l, `"axis":"knowledge"`) && strings.Contains(l, `"score":1,`) {
				lines[i] = strings.Replace(l, `"score":1,`, `"score":0,`, 1)
				break
			}
		}
		return []byte(strings.Join(lines, "\n"))
	})
	m, items, err := release.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := release.Rescore(m, items)
	if rep.OK() {
		t.Fatal("a changed item score went unnoticed")
	}
	for _, c := range rep.Axes {
		if (c.Name == "knowledge") != (c.Status == release.StatusDiffers) {
			t.Errorf("%s: %s", c.Name, c.Status)
		}
	}
}

func TestReadRejectsAlteredItems(t *testing.T) {
	run := fakeRun(t)
	dir := t.TempDir()
	if _, err := release.Write(run, dir, release.Options{}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, release.ItemsFile)
	data, _ := os.ReadFile(p)
	os.WriteFile(p, append(data, '\n'), 0o644)
	if _, _, err := release.Read(dir); err == nil || !strings.Contains(err.Error(), "items_sha256") {
		t.Errorf("altered items file: err = %v", err)
	}
	os.WriteFile(p, data, 0o644)
	tamper(t, dir, func(b []byte) []byte { return append(b, []byte(`{"axis":"nlu","item_id":"x","score":"high"}`+"\n")...) })
	_, _, err := release.Read(dir)
	if err == nil || !strings.Contains(err.Error(), "items.jsonl:") || !strings.Contains(err.Error(), "field score") {
		t.Errorf("bad field: err = %v", err)
	}
}

func TestLoadRunErrorsNameFileLineField(t *testing.T) {
	run := fakeRun(t)
	p := filepath.Join(run.Dir, "nlu", "scores.jsonl")
	data, _ := os.ReadFile(p)
	os.Chmod(p, 0o644)
	os.WriteFile(p, append(data, []byte(`{"item_id":"z","score":"1"}`+"\n")...), 0o644)
	_, err := release.LoadRun(run.Dir)
	if err == nil || !strings.Contains(err.Error(), "scores.jsonl:10:") || !strings.Contains(err.Error(), "field score") {
		t.Errorf("err = %v", err)
	}
	rp := filepath.Join(run.Dir, "result.json")
	os.Chmod(rp, 0o644)
	os.WriteFile(rp, []byte("{\n\"run_id\": \"x\",\n\"seed\": \"many\"\n}"), 0o644)
	_, err = release.LoadRun(run.Dir)
	if err == nil || !strings.Contains(err.Error(), "result.json:3:") || !strings.Contains(err.Error(), "field seed") {
		t.Errorf("err = %v", err)
	}
}

func TestWriteStaysInDir(t *testing.T) {
	run := fakeRun(t)
	out := t.TempDir()
	outside := t.TempDir()
	// A symlink planted where the items file goes must not be followed out.
	if err := os.Symlink(filepath.Join(outside, "stolen.jsonl"), filepath.Join(out, release.ItemsFile)); err != nil {
		t.Skip(err)
	}
	if _, err := release.Write(run, out, release.Options{}); err == nil {
		t.Error("wrote through a symlink pointing outside the bundle folder")
	}
	if _, err := os.Stat(filepath.Join(outside, "stolen.jsonl")); err == nil {
		t.Error("a file was created outside the bundle folder")
	}
}

// TestTestdataInSync keeps testdata/release (a committed fake run and its
// bundle, for readers and for the command tests) equal to what the helper
// writes today. Run with -update to rewrite it.
func TestTestdataInSync(t *testing.T) {
	root := filepath.Join("..", "..", "..", "testdata", "release")
	if *update {
		os.RemoveAll(filepath.Join(root, "store"))
		os.RemoveAll(filepath.Join(root, "bundle"))
		dir, err := fakerun.WriteRun(filepath.Join(root, "store"), fakerun.Options{})
		if err != nil {
			t.Fatal(err)
		}
		run, err := release.LoadRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := release.Write(run, filepath.Join(root, "bundle"), release.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	run, err := release.LoadRun(filepath.Join(root, "store", "runs", "fake-run"))
	if err != nil {
		t.Fatalf("%v (run go test ./infra/results/release -run TestTestdataInSync -update)", err)
	}
	want, _, err := release.Build(run, release.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, items, err := release.Read(filepath.Join(root, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	if got.ItemsSHA256 != want.ItemsSHA256 {
		t.Error("testdata/release/bundle is stale; rerun with -update")
	}
	fresh, _, err := release.Build(fakeRun(t), release.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.ItemsSHA256 != want.ItemsSHA256 {
		t.Error("testdata/release/store no longer matches the fake run helper (scorer or format change?); rerun with -update")
	}
	if rep := release.Rescore(got, items); !rep.OK() {
		t.Errorf("committed bundle does not rescore: %+v", rep)
	}
}

// A symlink in the run folder that points out of it is never followed: the
// bundle cannot pick up a file from elsewhere on the machine.
func TestLoadRunStaysInRunDir(t *testing.T) {
	dir, err := fakerun.WriteRun(t.TempDir(), fakerun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	// Plausible content, so only the symlink check can refuse it.
	scores := filepath.Join(dir, "nlu", "scores.jsonl")
	data, _ := os.ReadFile(scores)
	os.WriteFile(filepath.Join(outside, "scores.jsonl"), data, 0o644)
	os.Remove(scores)
	if err := os.Symlink(filepath.Join(outside, "scores.jsonl"), scores); err != nil {
		t.Skip(err)
	}
	if _, err := release.LoadRun(dir); err == nil || !strings.Contains(err.Error(), scores) {
		t.Errorf("LoadRun followed a symlink out of the run folder, or did not name it: err = %v", err)
	}
	os.Remove(scores)
	os.WriteFile(scores, data, 0o644)

	// The same for the raw predictions read by --include-raw.
	preds, _ := filepath.Glob(filepath.Join(dir, "nlu", "shards", "*", "pred-*.jsonl"))
	if len(preds) == 0 {
		t.Fatal("the fake run has no nlu predictions")
	}
	data, _ = os.ReadFile(preds[0])
	os.WriteFile(filepath.Join(outside, "pred.jsonl"), data, 0o644)
	os.Remove(preds[0])
	os.Symlink(filepath.Join(outside, "pred.jsonl"), preds[0])
	run, err := release.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := release.Write(run, t.TempDir(), release.Options{IncludeRaw: true}); err == nil || !strings.Contains(err.Error(), preds[0]) {
		t.Errorf("--include-raw followed a symlink out of the run folder, or did not name it: err = %v", err)
	}
	// Without raw outputs the predictions are not read at all.
	if _, err := release.Write(run, t.TempDir(), release.Options{}); err != nil {
		t.Errorf("a bundle without raw outputs: %v", err)
	}
}
