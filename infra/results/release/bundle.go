package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/chrf"
	"github.com/glossobench/glossobench/scorers/nlg"
)

// Format names the bundle layout; bump it when a field changes meaning.
const Format = "glossobench-release/1"

// The bundle's two files, always directly inside the bundle folder.
const (
	ItemsFile    = "items.jsonl"
	ManifestFile = "manifest.json"
)

// RawFields are ItemScore.Fields keys that hold model output text. They are
// dropped unless raw outputs are included.
var RawFields = []string{"hypothesis", "response", "generation", "output"}

// Item is one line of the bundle's items.jsonl.
type Item struct {
	Axis     string         `json:"axis"`
	ItemID   string         `json:"item_id"`
	Dataset  string         `json:"dataset,omitempty"`
	Lang     string         `json:"lang,omitempty"`
	Register string         `json:"register,omitempty"`
	Source   string         `json:"source,omitempty"`
	Score    float64        `json:"score"`
	Rating   float64        `json:"rating"`
	Label    bool           `json:"label"`
	Flagged  string         `json:"flagged,omitempty"`
	Fields   map[string]any `json:"fields,omitempty"`
	// ChrFStats are the item's chrF++ sufficient statistics (axes whose
	// headline is corpus chrF++): summed over items, they give the corpus
	// score exactly, without the model's text.
	ChrFStats []int `json:"chrf_stats,omitempty"`
	// Raw is the model's stored prediction, only with IncludeRaw.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// Manifest is the bundle's manifest.json.
type Manifest struct {
	Format        string `json:"format"`
	BenchVersion  string `json:"bench_version"`
	SchemaVersion string `json:"schema_version"`
	RunID         string `json:"run_id"`
	ModelID       string `json:"model_id"`
	// ModelIdentity is the run's measured weights (GGUF SHA-256, or server
	// model name and revision), from result.json.
	ModelIdentity  *runfiles.ModelIdentity `json:"model_identity,omitempty"`
	ConfigHash     string                  `json:"config_hash"`
	Seed           int64                   `json:"seed"`
	PluginVersions map[string]string       `json:"plugin_versions"`
	Datasets       []Dataset               `json:"datasets"`
	// Licenses are the distinct known dataset licences, most restrictive
	// first; MostRestrictiveLicense is the first of them (Unknown when none
	// is known); UnknownLicenses lists the datasets (axis/name) whose licence
	// is unknown, which it leaves out, and a note says so.
	Licenses               []string                `json:"licenses"`
	MostRestrictiveLicense string                  `json:"most_restrictive_license"`
	UnknownLicenses        []string                `json:"unknown_licenses,omitempty"`
	DedupKeptSHA256        string                  `json:"dedup_kept_sha256"`
	IncludeRaw             bool                    `json:"include_raw"`
	ItemsFile              string                  `json:"items_file"`
	ItemsSHA256            string                  `json:"items_sha256"`
	Items                  int                     `json:"items"`
	Axes                   map[string]AxisHeadline `json:"axes"`
	MSPublic               *float64                `json:"ms_public"`
	MSPooled               *float64                `json:"ms_pooled"`
	MSExperimental         *float64                `json:"ms_experimental"`
	MSAxes                 []string                `json:"ms_axes"`
	// MSCI95 is the run's interval on ms_public: a percentile bootstrap
	// over the ms_axes (each keeping its weight) with BootstrapResamples
	// resamples seeded by Seed. BootstrapResamples is 0 when the run
	// folder had no config to say it.
	MSCI95             *[2]float64 `json:"ms_ci95"`
	BootstrapResamples int         `json:"bootstrap_resamples"`
	Notes              []string    `json:"notes,omitempty"`
}

// Dataset is one dataset an axis read, with its licence and where the
// licence string came from: "config", "SOURCE note PATH", or "none: " and
// why (the licence is then Unknown).
type Dataset struct {
	Axis           string `json:"axis"`
	Name           string `json:"name"`
	License        string `json:"license"`
	LicenseFrom    string `json:"license_from"`
	HumanValidated bool   `json:"human_validated"`
}

// AxisHeadline is what the run published for one axis and how Rescore
// re-derives it.
type AxisHeadline struct {
	Metric  string   `json:"metric"`
	Score   *float64 `json:"score"`
	N       int      `json:"n"`
	Weight  float64  `json:"weight"`
	Tier    string   `json:"tier"`
	Rescore string   `json:"rescore"` // the method, or why it cannot be rescored
	// CI95 is the axis's own interval: the MS interval when the MS has one
	// weighted axis (stats.MSInterval).
	CI95 *[2]float64 `json:"ci95,omitempty"`
}

// Options control Write.
type Options struct {
	IncludeRaw bool // keep the model's raw predictions and output text fields
}

// Rescoring methods, as named in the manifest.
const (
	MethodMean = "mean of item scores"
	MethodChrF = "corpus chrF++ from summed chrf_stats"
	// MethodRefusal is the safety headline: the share of harmful prompts
	// refused. An item's "refused" field and its label (correct means
	// refused exactly when harmful) give whether it was harmful.
	MethodRefusal = "share of harmful items refused (fields.refused, label)"
	methodNoneAt  = "not rescorable: "
)

// method says how a metric's headline is re-derived from the bundle.
func method(metric string) string {
	switch metric {
	case "acc_cloze", "acc_generate", "prompt_level_strict_acc", "mean_judge_score_normalized":
		return MethodMean
	case "refusal_on_unsafe":
		return MethodRefusal
	case "chrf++":
		return MethodChrF
	}
	return methodNoneAt + "metric " + metric + " has no rescoring rule"
}

// Build turns a loaded run into the bundle's items and manifest, in a fixed
// order so that the same run always gives the same bytes.
func Build(run *Run, opt Options) (*Manifest, []byte, error) {
	res := &run.Result
	m := &Manifest{
		Format: Format, BenchVersion: res.BenchVersion, SchemaVersion: res.SchemaVersion,
		RunID: res.RunID, ModelID: res.ModelID, ModelIdentity: res.ModelIdentity, ConfigHash: res.ConfigHash, Seed: res.Seed,
		PluginVersions: res.PluginVersions, DedupKeptSHA256: res.Summary.Dedup.KeptSHA256,
		IncludeRaw: opt.IncludeRaw, ItemsFile: ItemsFile, Axes: map[string]AxisHeadline{},
		MSPublic: res.Summary.MSPublic, MSPooled: res.Summary.MSPooled, MSExperimental: res.Summary.MSExperimental,
		MSAxes: res.Summary.MSAxes, MSCI95: res.Summary.MSCI95,
	}
	if run.Config != nil {
		m.BootstrapResamples = run.Config.Run.BootstrapResamples
	}
	if m.PluginVersions == nil {
		m.PluginVersions = map[string]string{}
	}
	if m.MSAxes == nil {
		m.MSAxes = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	datasets := map[[2]string]bool{}
	for _, axis := range run.AxisNames() {
		rep := res.Axes[axis]
		ad := run.Axes[axis]
		h := AxisHeadline{Metric: rep.Metric, Score: rep.Score, N: rep.N, Weight: rep.Weight, Tier: rep.Tier, Rescore: method(rep.Metric), CI95: rep.CI95}
		var raw map[string]json.RawMessage
		if opt.IncludeRaw {
			var err error
			if raw, err = readPredictions(run.Dir, axis); err != nil {
				return nil, nil, err
			}
		}
		var chrfStats [][]int
		if h.Rescore == MethodChrF {
			var err error
			if chrfStats, err = axisChrF(ad); err != nil {
				h.Rescore = methodNoneAt + err.Error()
			}
		}
		for i, s := range ad.Scores {
			it := Item{Axis: axis, ItemID: s.ItemID, Source: s.Source, Lang: s.Lang, Score: s.Score,
				Rating: s.Rating, Label: s.Label, Flagged: s.Flagged, Fields: s.Fields}
			if src, ok := ad.Items[s.ItemID]; ok {
				it.Dataset, it.Register = src.Dataset, src.Register
				if it.Lang == "" {
					it.Lang = src.Lang
				}
				datasets[[2]string{axis, src.Dataset}] = true
			}
			if chrfStats != nil {
				it.ChrFStats = chrfStats[i]
			}
			if _, dup := it.Fields[nlg.StatsField]; dup {
				// The bundle carries them once, as chrf_stats.
				it.Fields = maps.Clone(it.Fields)
				delete(it.Fields, nlg.StatsField)
			}
			if !opt.IncludeRaw && len(it.Fields) > 0 {
				it.Fields = withoutRaw(it.Fields)
			}
			if raw != nil {
				it.Raw = raw[s.ItemID]
			}
			if err := enc.Encode(&it); err != nil {
				return nil, nil, fmt.Errorf("%s: item %s: %w", axis, s.ItemID, err)
			}
			m.Items++
		}
		if rep.Score != nil && len(ad.Scores) == 0 {
			h.Rescore = methodNoneAt + "no item scores stored"
		}
		m.Axes[axis] = h
	}
	m.Datasets = datasetList(run, datasets)
	seen := map[string]bool{}
	for _, d := range m.Datasets {
		if d.License == Unknown {
			m.UnknownLicenses = append(m.UnknownLicenses, d.Axis+"/"+d.Name)
			continue
		}
		if !seen[d.License] {
			seen[d.License] = true
			m.Licenses = append(m.Licenses, d.License)
		}
	}
	slices.SortStableFunc(m.Licenses, func(a, b string) int {
		if d := Restrictiveness(b) - Restrictiveness(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	if m.Licenses == nil {
		m.Licenses = []string{}
	}
	m.MostRestrictiveLicense = MostRestrictive(m.Licenses)
	switch {
	case len(m.UnknownLicenses) > 0 && len(m.Licenses) == 0:
		m.MostRestrictiveLicense = Unknown
		m.Notes = append(m.Notes, fmt.Sprintf("licence unknown for every dataset (%s): state each in the config's license field or in a SPDX-License-Identifier line of the dataset's SOURCE note", strings.Join(m.UnknownLicenses, ", ")))
	case len(m.UnknownLicenses) > 0:
		m.Notes = append(m.Notes, fmt.Sprintf("most_restrictive_license %s is over the known licences only: the licence of %s is unknown (state it in the config's license field or in a SPDX-License-Identifier line of the dataset's SOURCE note)", m.MostRestrictiveLicense, strings.Join(m.UnknownLicenses, ", ")))
	}
	if !opt.IncludeRaw {
		m.Notes = append(m.Notes, "raw model outputs dropped (fields "+strings.Join(RawFields, ", ")+"); release with --include-raw to keep them")
	}
	sum := sha256.Sum256(buf.Bytes())
	m.ItemsSHA256 = hex.EncodeToString(sum[:])
	return m, buf.Bytes(), nil
}

// axisChrF computes every item's chrF++ statistics, or none.
func axisChrF(ad *AxisData) ([][]int, error) {
	cm := chrf.New(chrf.ChrFPlusPlus)
	out := make([][]int, len(ad.Scores))
	for i, s := range ad.Scores {
		st, err := itemChrF(cm, s, ad.Items)
		if err != nil {
			return nil, err
		}
		out[i] = st
	}
	return out, nil
}

// itemChrF computes one item's chrF++ statistics from the hypothesis the
// axis stored and the item's references.
func itemChrF(cm *chrf.CHRF, s scorers.ItemScore, items map[string]scorers.Item) ([]int, error) {
	hyp, ok := s.Fields["hypothesis"].(string)
	if !ok {
		return nil, fmt.Errorf("item %s stores no hypothesis field", s.ItemID)
	}
	src, ok := items[s.ItemID]
	if !ok || len(src.References) == 0 {
		return nil, fmt.Errorf("item %s has no stored references", s.ItemID)
	}
	refs := make([][]string, len(src.References))
	for k, r := range src.References {
		refs[k] = []string{r}
	}
	segs, err := cm.SegmentStats([]string{hyp}, refs)
	if err != nil {
		return nil, fmt.Errorf("item %s: %w", s.ItemID, err)
	}
	return segs[0], nil
}

func withoutRaw(f map[string]any) map[string]any {
	out := make(map[string]any, len(f))
	for k, v := range f {
		if !slices.Contains(RawFields, k) {
			out[k] = v
		}
	}
	return out
}

// datasetList names every dataset of the run: those in the config and those
// the stored items name, each with its licence.
func datasetList(run *Run, fromItems map[[2]string]bool) []Dataset {
	all := map[[2]string]bool{}
	for k := range fromItems {
		all[k] = true
	}
	if run.Config != nil {
		for axis, ac := range run.Config.Axes {
			if _, ran := run.Result.Axes[axis]; !ran {
				continue
			}
			for _, d := range ac.Datasets {
				all[[2]string{axis, d.Name}] = true
			}
		}
	}
	var out []Dataset
	for k := range all {
		d := Dataset{Axis: k[0], Name: k[1], License: Unknown, LicenseFrom: "none: the run's manifest does not list this dataset"}
		if cfg, inCfg := run.Dataset(k[0], k[1]); inCfg {
			d.HumanValidated = cfg.HumanValidated
			d.License, d.LicenseFrom = datasetLicense(cfg, run.Config.Axes[k[0]].BaseDir)
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Dataset) int {
		if c := strings.Compare(a.Axis, b.Axis); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if out == nil {
		out = []Dataset{}
	}
	return out
}

// readPredictions reads an axis's checkpointed predictions, by item id,
// compacted, through an os.Root of the run folder like LoadRun.
func readPredictions(runDir, axis string) (map[string]json.RawMessage, error) {
	run, err := runfiles.Dir(runDir)
	if err != nil {
		return nil, err
	}
	defer run.Close()
	out := map[string]json.RawMessage{}
	err = run.EachPrediction(axis, func(id string, raw json.RawMessage) error {
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return fmt.Errorf("prediction of %s: %w", id, err)
		}
		out[id] = c.Bytes()
		return nil
	})
	return out, err
}

// Write builds the bundle of run and writes it into dir, creating dir if
// needed. Only the two bundle files are written, through an os.Root, so
// nothing lands outside dir (not even through a symlink inside it).
func Write(run *Run, dir string, opt Options) (*Manifest, error) {
	m, items, err := Build(run, opt)
	if err != nil {
		return nil, err
	}
	man, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for _, f := range []struct {
		name string
		data []byte
	}{{ItemsFile, items}, {ManifestFile, append(man, '\n')}} {
		if err := root.WriteFile(f.name, f.data, 0o644); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, f.name), err)
		}
	}
	return m, nil
}

// Read reads a bundle folder and checks the items file against the
// manifest's SHA-256. Item lines are decoded strictly: an unknown field is
// an error naming the file, line and field.
func Read(dir string) (*Manifest, []Item, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	manPath := filepath.Join(dir, ManifestFile)
	data, err := root.ReadFile(ManifestFile)
	if err != nil {
		return nil, nil, err
	}
	m := new(Manifest)
	if err := runfiles.DecodeJSON(manPath, data, m); err != nil {
		return nil, nil, err
	}
	if m.Format != Format {
		return nil, nil, fmt.Errorf("%s: field format is %q, want %q", manPath, m.Format, Format)
	}
	if m.ItemsFile != ItemsFile {
		return nil, nil, fmt.Errorf("%s: field items_file is %q, want %q", manPath, m.ItemsFile, ItemsFile)
	}
	itemsPath := filepath.Join(dir, ItemsFile)
	data, err = root.ReadFile(ItemsFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: missing (the manifest names it)", itemsPath)
		}
		return nil, nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != m.ItemsSHA256 {
		return nil, nil, fmt.Errorf("%s: SHA-256 %s differs from the manifest's items_sha256 %s: the file was altered", itemsPath, hex.EncodeToString(sum[:]), m.ItemsSHA256)
	}
	items, err := decodeItems(itemsPath, data)
	if err != nil {
		return nil, nil, err
	}
	return m, items, nil
}

func decodeItems(name string, data []byte) ([]Item, error) {
	var out []Item
	err := runfiles.ScanStrictJSONL(bytes.NewReader(data), name, func(line int, it Item) error {
		if it.Axis == "" {
			return fmt.Errorf("%s:%d: field axis is missing or empty", name, line)
		}
		if it.ItemID == "" {
			return fmt.Errorf("%s:%d: field item_id is missing or empty", name, line)
		}
		out = append(out, it)
		return nil
	})
	return out, err
}
