// Package report renders a run's result.json as one self-contained HTML
// page: the mean-score tiers, per-axis scores with their 95% intervals as an
// embedded plot, the measurement-profile table, the leakage audit of every
// pooled axis (its three numbers, L and verdict per detector, each drawn as
// the paper's chart: three marks on one 0.5–1.0 ruler with the floor and
// band lines) and every note. The page has no script and loads nothing:
// the plots are SVGs inlined as data URIs, and
// all text from the run (notes, axis names, model id) goes through
// html/template, so markup in it is shown, never run.
//
// Every number is printed rounded for reading and carries its exact value
// and its result.json path in data-value / data-field attributes, so a test
// (or a reader's tool) can check the page against result.json.
package report

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers/checks/audit"
)

// Num is one number on the page.
type Num struct {
	Field string // its path in result.json, e.g. axes.nlu.score
	Value *float64
}

// Text is the number rounded to four decimals, or "–" when absent.
func (n Num) Text() string {
	if n.Value == nil {
		return "–"
	}
	return strconv.FormatFloat(*n.Value, 'f', 4, 64)
}

// Exact is the number in its shortest exact form, or "" when absent.
func (n Num) Exact() string {
	if n.Value == nil {
		return ""
	}
	return strconv.FormatFloat(*n.Value, 'g', -1, 64)
}

type axisRow struct {
	Name, Tier, Metric, ScorerType, Version string
	Score, Lo, Hi, Weight, Chance, Trunc    Num
	Kappa, Contamination                    Num
	ContaminationText                       string // when the rate is not a number ("no corpus")
	N                                       int
	Discriminates                           bool
	Cloze, Generate, Gap                    Num
	Leakage, LeakageLine                    string
	Notes, StageNotes                       []string
	Secondary                               string // the axis's secondary metrics as indented JSON
}

type page struct {
	R                    *runfiles.Result
	Plot                 template.URL
	PlotErr              string
	MSPublic, MSLo, MSHi Num
	MSPooled, MSExp      Num
	Axes                 []axisRow
	Audits               []axisAudit
	PluginNames          []string
}

func num(field string, v *float64) Num { return Num{Field: field, Value: v} }

func f64(v float64) *float64 { return &v }

// Write renders res as an HTML page.
func Write(w io.Writer, res *runfiles.Result) error {
	p := page{R: res}
	s := res.Summary
	p.MSPublic, p.MSPooled, p.MSExp = num("summary.ms_public", s.MSPublic), num("summary.ms_pooled", s.MSPooled), num("summary.ms_experimental", s.MSExperimental)
	p.MSLo, p.MSHi = num("summary.ms_ci95.0", nil), num("summary.ms_ci95.1", nil)
	if s.MSCI95 != nil {
		p.MSLo.Value, p.MSHi.Value = f64(s.MSCI95[0]), f64(s.MSCI95[1])
	}
	names := make([]string, 0, len(res.Axes))
	for n := range res.Axes {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		a := res.Axes[n]
		pre := "axes." + n + "."
		row := axisRow{Name: n, Tier: a.Tier, Metric: a.Metric, ScorerType: a.Profile.ScorerType, Version: a.Version,
			Score: num(pre+"score", a.Score), Lo: num(pre+"ci95.0", nil), Hi: num(pre+"ci95.1", nil),
			Weight: num(pre+"weight", f64(a.Weight)), Chance: num(pre+"chance", f64(a.Chance)),
			Trunc: num(pre+"truncation_rate", f64(a.TruncationRate)), N: a.Profile.N, Discriminates: a.Discriminates,
			Kappa:         num(pre+"measurement_profile.inter_judge_kappa", a.Profile.InterJudgeKappa),
			Contamination: num(pre+"measurement_profile.contamination_rate", nil),
			Notes:         a.Notes, StageNotes: a.Profile.StageNotes, Leakage: "not audited"}
		if a.CI95 != nil {
			row.Lo.Value, row.Hi.Value = f64(a.CI95[0]), f64(a.CI95[1])
		}
		switch c := a.Profile.ContaminationRate.(type) {
		case float64:
			row.Contamination.Value = f64(c)
		case nil:
			row.ContaminationText = "–"
		default:
			row.ContaminationText = fmt.Sprint(c)
		}
		if l := a.Profile.Leakage; l != nil {
			row.Leakage, row.LeakageLine = l.Verdict, l.Line
		}
		if len(a.Secondary) > 0 {
			if js, err := json.MarshalIndent(a.Secondary, "", "  "); err == nil {
				row.Secondary = string(js)
			}
		}
		if b := a.ByScoring; b != nil {
			row.Cloze, row.Generate, row.Gap = num(pre+"by_scoring.cloze", b.Cloze), num(pre+"by_scoring.generate", b.Generate), num(pre+"by_scoring.gap", b.Gap)
		}
		p.Axes = append(p.Axes, row)
	}
	for n := range res.PluginVersions {
		p.PluginNames = append(p.PluginNames, n)
	}
	slices.Sort(p.PluginNames)
	for _, n := range names {
		p.Audits = append(p.Audits, auditSection(n, res.Axes[n].Profile.Leakage))
	}
	svg, err := scorePlot(p)
	if err != nil {
		p.PlotErr = err.Error()
	} else {
		p.Plot = template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg))
	}
	return pageTmpl.Execute(w, p)
}

// scorePlot draws each scored axis (and the public mean score) as a point
// with its 95% interval on a 0–1 scale.
func scorePlot(pg page) ([]byte, error) {
	type row struct {
		label     string
		v, lo, hi *float64
	}
	var rows []row
	if pg.MSPublic.Value != nil {
		rows = append(rows, row{"MS (public)", pg.MSPublic.Value, pg.MSLo.Value, pg.MSHi.Value})
	}
	for i := len(pg.Axes) - 1; i >= 0; i-- {
		a := pg.Axes[i]
		if a.Score.Value != nil {
			rows = append(rows, row{a.Name, a.Score.Value, a.Lo.Value, a.Hi.Value})
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no scored axis to plot")
	}
	p := plot.New()
	p.Title.Text = "Score per axis with 95% interval"
	p.X.Label.Text = "score"
	p.X.Min, p.X.Max = 0, 1
	p.Add(plotter.NewGrid())
	labels := make([]string, len(rows))
	pts := make(plotter.XYs, len(rows))
	for i, r := range rows {
		labels[i] = r.label
		pts[i] = plotter.XY{X: clamp01(*r.v), Y: float64(i)}
		if r.lo != nil && r.hi != nil {
			l, err := plotter.NewLine(plotter.XYs{{X: clamp01(*r.lo), Y: float64(i)}, {X: clamp01(*r.hi), Y: float64(i)}})
			if err != nil {
				return nil, err
			}
			l.Width = vg.Points(2)
			l.Color = color.Gray{Y: 90}
			p.Add(l)
		}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.Shape = draw.CircleGlyph{}
	sc.Radius = vg.Points(4)
	sc.Color = color.RGBA{R: 30, G: 90, B: 180, A: 255}
	p.Add(sc)
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -0.7, float64(len(rows))-0.3
	wt, err := p.WriterTo(vg.Points(520), vg.Points(60+28*float64(len(rows))), "svg")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// axisAudit is one axis's leakage audit on the page: the pools it was
// audited over (its sources, and its judges and registers when it has
// them), or why there is none.
type axisAudit struct {
	Axis  string
	Field string // the audit's path in result.json
	Text  string // "not audited" when the profile holds no audit, or why the axis is not auditable
	Pools []auditPool
}

// auditPool is one pool: what it audits (the detector that rates each row,
// the label, the source), the verdict of the paper's fixed rating, then
// every audit detector's numbers and chart.
type auditPool struct {
	Title, Column, Field, Verdict        string // Field: the pool's path in result.json
	Detector, DetectorIs, Label, LabelIs string
	Sources, Rows                        int
	Pooled                               bool
	Detectors                            []auditView
	Fingerprint                          Num
	FingerprintWarn                      bool
	TrainedNote                          string
}

// auditView is one detector's audit: its numbers, reading and chart.
type auditView struct {
	Field, Detector, Verdict, Line, Floor, Sensitivity, Command string
	Headline, Lo, Hi, MeasOnly, SourceOnly, L, LMin             Num
	ShuffleN                                                    int
	ShuffleMean, ShuffleP99, ShuffleMax                         Num
	ShuffleHeadline                                             string
	Warnings                                                    []string
	Chart                                                       template.URL
	ChartErr                                                    string
}

func auditSection(axis string, l *runfiles.AuditSummary) axisAudit {
	field := "axes." + axis + ".measurement_profile.leakage"
	out := axisAudit{Axis: axis, Field: field}
	if l == nil {
		out.Text = "not audited"
		return out
	}
	if l.Design == nil {
		// Not auditable (no label independent of the rating), or a summary
		// from before pools named their design.
		out.Text = l.Verdict
		return out
	}
	out.Pools = append(out.Pools, pool(field, l))
	for i := range l.Pools {
		out.Pools = append(out.Pools, pool(fmt.Sprintf("%s.pools.%d", field, i), &l.Pools[i]))
	}
	return out
}

func pool(field string, l *runfiles.AuditSummary) auditPool {
	d := l.Design
	p := auditPool{Title: d.Detector + " by " + d.Source, Column: d.Source, Field: field, Verdict: l.Verdict, Sources: l.Sources, Rows: l.Rows,
		Detector: d.Detector, DetectorIs: d.DetectorIs, Label: d.Label, LabelIs: d.LabelIs,
		TrainedNote: l.TrainedNote, Pooled: l.Headline != nil, Fingerprint: num(field+".fingerprint.macro_ovr_auc", nil)}
	if f := l.Fingerprint; f != nil {
		p.Fingerprint.Value, p.FingerprintWarn = f64(f.MacroAUC), f.Warn
	}
	if !p.Pooled {
		return p
	}
	p.Detectors = append(p.Detectors, view(d.Source, field, l))
	for i := range l.Trained {
		p.Detectors = append(p.Detectors, view(d.Source, fmt.Sprintf("%s.trained.%d", field, i), &l.Trained[i]))
	}
	return p
}

func view(column, field string, l *runfiles.AuditSummary) auditView {
	v := auditView{Field: field, Detector: l.Detector, Verdict: l.Verdict, Line: l.Line, Command: l.Command, Warnings: l.Warnings,
		Headline: num(field+".headline", l.Headline), Lo: num(field+".headline_ci95.0", nil), Hi: num(field+".headline_ci95.1", nil),
		MeasOnly: num(field+".measurements_only", l.MeasurementsOnly), SourceOnly: num(field+".source_only", l.SourceOnly),
		L: num(field+".l", l.L), LMin: num(field+".l_min", l.LMin),
		ShuffleMean: num(field+".shuffle.mean", nil), ShuffleP99: num(field+".shuffle.p99", nil), ShuffleMax: num(field+".shuffle.max", nil)}
	// Summaries written before the detector was named were of the mean-half rule.
	v.Detector = cmp.Or(v.Detector, audit.DetectorMeanHalf)
	if l.CI95 != nil {
		v.Lo.Value, v.Hi.Value = f64(l.CI95[0]), f64(l.CI95[1])
	}
	if sh := l.Shuffle; sh != nil {
		v.ShuffleN, v.ShuffleHeadline = sh.N, sh.Headline
		v.ShuffleMean.Value, v.ShuffleP99.Value, v.ShuffleMax.Value = f64(sh.Mean), f64(sh.P99), f64(sh.Max)
	}
	if s := l.Sensitivity; s != nil {
		v.Sensitivity = "the verdict is the same for every floor 0.60–0.70 and band 0.85–0.95"
		if !s.Stable {
			v.Sensitivity = "the verdict changes: " + strings.Join(s.Regions, "; ")
		}
	}
	m, ok := chartMarks(column, l)
	if !ok {
		v.ChartErr = "the summary lacks one of the three numbers"
		if l.Headline == nil {
			v.ChartErr = l.Verdict // why this detector was not run
		}
		return v
	}
	v.Floor = fmt.Sprintf("%.2f fails", m.Floor)
	if m.FloorPassed {
		v.Floor = fmt.Sprintf("%.2f passes", m.Floor)
	}
	if l.FloorRule != "" {
		v.Floor += " (" + l.FloorRule + " rule)"
	}
	svg, err := m.Chart("svg", vg.Points(560), vg.Points(300))
	if err != nil {
		v.ChartErr = err.Error()
	} else {
		v.Chart = template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg))
	}
	return v
}

// chartMarks are the chart's numbers from a stored summary. Summaries from
// before the rule was stored were read with the authors' defaults, so the
// floor check is redone with them.
func chartMarks(column string, l *runfiles.AuditSummary) (audit.Marks, bool) {
	if l.Headline == nil || l.MeasurementsOnly == nil || l.SourceOnly == nil || l.L == nil || l.LMin == nil {
		return audit.Marks{}, false
	}
	rule := audit.DefaultRule()
	if l.Floor > 0 {
		rule.Floor = l.Floor
	}
	if l.Band > 0 {
		rule.Band = l.Band
	}
	m := audit.Marks{Detector: l.Detector, SourceColumn: column, Verdict: l.Verdict,
		Headline: *l.Headline, CI95: l.CI95, MeasurementsOnly: *l.MeasurementsOnly, SourceOnly: *l.SourceOnly,
		L: *l.L, LMin: *l.LMin, Floor: rule.Floor, Band: rule.Band}
	m.Detector = cmp.Or(m.Detector, audit.DetectorMeanHalf)
	if l.FloorPassed != nil {
		m.FloorPassed = *l.FloorPassed
	} else {
		ciLow := math.NaN()
		if l.CI95 != nil {
			ciLow = l.CI95[0]
		}
		m.FloorPassed = rule.Read(m.Headline, ciLow, m.SourceOnly).FloorPassed
	}
	return m, true
}

func clamp01(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return min(max(x, 0), 1)
}

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>GlossoBench report: {{.R.ModelID}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:72em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.note{white-space:pre-wrap}
small{color:#666}
</style>
</head>
<body>
<h1>GlossoBench report</h1>
<table id="run">
<tr><th>model</th><td id="model_id">{{.R.ModelID}}</td></tr>
<tr><th>run</th><td id="run_id">{{.R.RunID}}</td></tr>
<tr><th>bench version</th><td>{{.R.BenchVersion}} (schema {{.R.SchemaVersion}})</td></tr>
<tr><th>config hash</th><td>{{.R.ConfigHash}}</td></tr>
<tr><th>seed</th><td>{{.R.Seed}}</td></tr>
<tr><th>plugin versions</th><td>{{range .PluginNames}}{{.}} {{index $.R.PluginVersions .}}; {{end}}</td></tr>
</table>

<h2>Mean score</h2>
<table id="ms">
<tr><th>tier</th><th>score</th><th>95% low</th><th>95% high</th></tr>
<tr><td>MS (public)</td>{{template "num" .MSPublic}}{{template "num" .MSLo}}{{template "num" .MSHi}}</tr>
<tr><td>MS (pooled items)</td>{{template "num" .MSPooled}}<td></td><td></td></tr>
<tr><td>MS (experimental, self-built)</td>{{template "num" .MSExp}}<td></td><td></td></tr>
</table>
<p class="note" id="ms_note">{{.R.Summary.MSNote}}</p>

<h2>Scores per axis</h2>
{{if .Plot}}<img id="plot" alt="score per axis with 95% interval" src="{{.Plot}}">{{else}}<p>No plot: {{.PlotErr}}</p>{{end}}
<table id="axes">
<tr><th>axis</th><th>tier</th><th>metric</th><th>score</th><th>95% low</th><th>95% high</th><th>weight</th><th>chance</th><th>discriminates</th><th>truncation rate</th><th>cloze</th><th>generate</th><th>gap</th><th>version</th></tr>
{{range .Axes}}<tr data-axis="{{.Name}}"><td>{{.Name}}</td><td>{{.Tier}}</td><td>{{.Metric}}</td>{{template "num" .Score}}{{template "num" .Lo}}{{template "num" .Hi}}{{template "num" .Weight}}{{template "num" .Chance}}<td>{{if .Discriminates}}yes{{else}}no (near chance){{end}}</td>{{template "num" .Trunc}}{{template "num" .Cloze}}{{template "num" .Generate}}{{template "num" .Gap}}<td>{{.Version}}</td></tr>
{{end}}</table>

<h2>Measurement profile</h2>
<table id="profile">
<tr><th>axis</th><th>n</th><th>scorer type</th><th>inter-judge κ</th><th>contamination rate</th><th>leakage verdict</th></tr>
{{range .Axes}}<tr data-axis="{{.Name}}"><td>{{.Name}}</td><td class="num" data-field="axes.{{.Name}}.measurement_profile.n" data-value="{{.N}}">{{.N}}</td><td>{{.ScorerType}}</td>{{template "num" .Kappa}}{{if .ContaminationText}}<td>{{.ContaminationText}}</td>{{else}}{{template "num" .Contamination}}{{end}}<td>{{.Leakage}}{{if .LeakageLine}}<br><small>{{.LeakageLine}}</small>{{end}}</td></tr>
{{end}}</table>

<h2>Leakage audit</h2>
<p><small>Source-identity leakage audit (Xia &amp; Aykent, AACL-IJCNLP 2026): each pool is a detector that rates rows (a model's confidence in its own answer, a judge's rating) scored against a label it did not produce, pooled by a source tag; it is scored three ways on the same rows, the headline (rating and source tag), measurements-only (tag covered) and source-only (each row rated by its source's yes-rate). L = source-only ÷ headline is always printed; it is read only when the headline clears the floor. Floor 0.65 and band 0.90 are the authors' defaults. Circle: headline with its 95% interval; square: measurements-only; triangle: source-only.</small></p>
{{range .Audits}}<section class="audit" data-axis="{{.Axis}}">
<h3>{{.Axis}}</h3>
{{if .Text}}<p class="audit-text" data-field="{{.Field}}.verdict">{{.Text}}</p>
{{end}}{{range .Pools}}<h4>{{.Title}}{{if .Sources}} ({{.Sources}} {{.Column}}{{if gt .Sources 1}}s{{end}}, {{.Rows}} rows){{end}}</h4>
<p class="audit-design" data-field="{{.Field}}.design"><small>detector <code>{{.Detector}}</code>: {{.DetectorIs}} · label <code>{{.Label}}</code>: {{.LabelIs}} · source <code>{{.Column}}</code></small></p>
{{if not .Pooled}}<p class="audit-text" data-field="{{.Field}}.verdict">{{.Verdict}}</p>
{{else}}<table class="audit-numbers">
<tr><th>detector</th><th>headline</th><th>95% low</th><th>95% high</th><th>measurements-only</th><th>source-only</th><th>L</th><th>lowest L</th><th>floor</th><th>verdict</th></tr>
{{range .Detectors}}<tr data-audit="{{.Field}}"><td>{{.Detector}}</td>{{template "num" .Headline}}{{template "num" .Lo}}{{template "num" .Hi}}{{template "num" .MeasOnly}}{{template "num" .SourceOnly}}{{template "num" .L}}{{template "num" .LMin}}<td>{{.Floor}}</td><td class="verdict" data-field="{{.Field}}.verdict">{{.Verdict}}</td></tr>
{{end}}</table>
{{if .Fingerprint.Value}}<p>source fingerprint (the rating alone predicting the {{.Column}} tag, macro one-vs-rest AUC): <span class="num" data-field="{{.Fingerprint.Field}}" data-value="{{.Fingerprint.Exact}}">{{.Fingerprint.Text}}</span>{{if .FingerprintWarn}} <strong>warning: covering the tag cannot hide the source</strong>{{end}}</p>
{{end}}{{range .Detectors}}<figure class="audit-chart" data-audit="{{.Field}}">
{{if .Chart}}<img class="audit-chart" data-audit="{{.Field}}" alt="leakage audit, {{.Detector}}: {{.Verdict}}" src="{{.Chart}}">{{else}}<p>No chart: {{.ChartErr}}</p>{{end}}
<figcaption><small>{{.Line}}</small>
{{if .ShuffleN}}<br><small>tag shuffles ({{.ShuffleN}}): L mean <span class="num" data-field="{{.ShuffleMean.Field}}" data-value="{{.ShuffleMean.Exact}}">{{.ShuffleMean.Text}}</span>, 99th percentile <span class="num" data-field="{{.ShuffleP99.Field}}" data-value="{{.ShuffleP99.Exact}}">{{.ShuffleP99.Text}}</span>, max <span class="num" data-field="{{.ShuffleMax.Field}}" data-value="{{.ShuffleMax.Exact}}">{{.ShuffleMax.Text}}</span>; headline {{.ShuffleHeadline}}</small>{{end}}
{{if .Sensitivity}}<br><small>sensitivity: {{.Sensitivity}}</small>{{end}}
{{range .Warnings}}<br><small>warning: {{.}}</small>{{end}}
{{if .Command}}<br><small>re-run: <code>{{.Command}}</code></small>{{end}}</figcaption>
</figure>
{{end}}{{if .TrainedNote}}<p><small>{{.TrainedNote}}</small></p>
{{end}}{{end}}{{end}}</section>
{{end}}
{{range .Axes}}{{if .Secondary}}<details><summary>{{.Name}}: secondary metrics</summary><pre>{{.Secondary}}</pre></details>
{{end}}{{end}}
<h2>Notes</h2>
<ul id="notes">
{{range .R.Summary.Notes}}<li class="note">{{.}}</li>
{{end}}{{range .Axes}}{{$a := .Name}}{{range .Notes}}<li class="note">{{$a}}: {{.}}</li>
{{end}}{{range .StageNotes}}<li class="note">{{$a}} (stage): {{.}}</li>
{{end}}{{end}}{{range .R.Summary.SkippedAxes}}<li class="note">skipped {{.Axis}}: {{.Reason}}</li>
{{end}}{{if .R.Summary.NearChanceAxes}}<li class="note">near-chance axes (ε = {{.R.Summary.NearChanceEps}}): {{range .R.Summary.NearChanceAxes}}{{.}} {{end}}</li>
{{end}}{{range .R.Summary.Dedup.Notes}}<li class="note">dedup: {{.}}</li>
{{end}}</ul>
<p><small>dedup corpus: {{.R.Summary.Dedup.Corpus}}; kept items SHA-256 {{.R.Summary.Dedup.KeptSHA256}}; store {{.R.Store}}</small></p>
</body>
</html>
{{define "num"}}<td class="num"{{if .Field}} data-field="{{.Field}}"{{end}}{{if .Value}} data-value="{{.Exact}}"{{end}}>{{.Text}}</td>{{end}}
`))
