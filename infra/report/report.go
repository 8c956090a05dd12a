// Package report renders a run's result.json as one self-contained HTML
// page: the mean-score tiers, per-axis scores with their 95% intervals as an
// embedded plot, the measurement-profile table and every note. The page has
// no script and loads nothing: the plot is an SVG inlined as a data URI, and
// all text from the run (notes, axis names, model id) goes through
// html/template, so markup in it is shown, never run.
//
// Every number is printed rounded for reading and carries its exact value
// and its result.json path in data-value / data-field attributes, so a test
// (or a reader's tool) can check the page against result.json.
package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/glossobench/glossobench/activities"
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
	R                    *activities.Result
	Plot                 template.URL
	PlotErr              string
	MSPublic, MSLo, MSHi Num
	MSPooled, MSExp      Num
	Axes                 []axisRow
	PluginNames          []string
}

func num(field string, v *float64) Num { return Num{Field: field, Value: v} }

func f64(v float64) *float64 { return &v }

// Write renders res as an HTML page.
func Write(w io.Writer, res *activities.Result) error {
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
