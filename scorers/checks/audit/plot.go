package audit

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Marks are the numbers the chart draws. They are a small part of a
// Report, so a page rendered later from a run's stored summary (result.json)
// draws the same chart as the command does from the full report.
type Marks struct {
	Detector         string
	SourceColumn     string
	Verdict          string
	Headline         float64
	CI95             *[2]float64 // nil: no interval was computed
	MeasurementsOnly float64
	MeasurementsMin  float64 // DetectorEach: the weakest single measurement; 0 otherwise
	SourceOnly       float64
	L, LMin          float64
	Floor, Band      float64
	FloorPassed      bool
}

// Marks returns what the chart draws from r.
func (r Report) Marks() Marks {
	m := Marks{
		Detector: r.Detector, SourceColumn: r.SourceColumn, Verdict: r.Verdict,
		Headline: r.Headline, MeasurementsOnly: r.MeasurementsOnly, SourceOnly: r.SourceOnly,
		L: r.L, LMin: r.LMin, Floor: r.Rule.Floor, Band: r.Rule.Band, FloorPassed: r.Reading.FloorPassed,
	}
	if r.Detector == DetectorEach {
		m.MeasurementsMin = r.MeasurementsMin
	}
	if r.BootstrapN > 0 {
		ci := r.CI95
		m.CI95 = &ci
	}
	return m
}

// Labels are the texts the chart prints for its title and its three marks,
// so a reader (or a test) can match the chart against the numbers.
func (m Marks) Labels() (title, headline, measurementsOnly, sourceOnly string) {
	title = fmt.Sprintf("%s: L %.2f (lowest possible %.2f)", m.Verdict, m.L, m.LMin)
	if !m.FloorPassed {
		title = fmt.Sprintf("%s: L %.2f printed, not read (lowest possible %.2f)", m.Verdict, m.L, m.LMin)
	}
	headline = fmt.Sprintf("headline %.3f", m.Headline)
	measurementsOnly = fmt.Sprintf("measurements-only %.3f", m.MeasurementsOnly)
	if m.MeasurementsMin != 0 {
		measurementsOnly = fmt.Sprintf("measurements-only %.3f to %.3f", m.MeasurementsMin, m.MeasurementsOnly)
	}
	sourceOnly = fmt.Sprintf("source-only %.3f", m.SourceOnly)
	return title, headline, measurementsOnly, sourceOnly
}

// Plot draws the audit as the paper does (see Marks.Chart) to path; the
// format follows the extension, .png or .svg.
func (r Report) Plot(path string) error {
	if r.Skip != "" {
		return errors.New("audit: no chart: " + r.Skip)
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("audit: chart %s: want a .png or .svg file", path)
	}
	b, err := r.Marks().Chart(ext[1:], 8*vg.Inch, 4*vg.Inch)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Chart draws the three scores as marks on one 0.5–1.0 ruler (circle:
// headline, with its 95% interval; square: measurements-only, a range for
// DetectorEach; triangle: source-only), with the floor, and the band drawn
// where it falls on the ruler: the source-only score at which L reaches the
// band, band × headline. format is "svg" or "png".
func (m Marks) Chart(format string, width, height vg.Length) ([]byte, error) {
	if format != "svg" && format != "png" {
		return nil, fmt.Errorf("audit: chart format %q: want svg or png", format)
	}
	if !(m.Headline > 0) {
		return nil, errors.New("audit: no chart: no headline")
	}
	title, headLabel, measLabel, srcLabel := m.Labels()
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = fmt.Sprintf("AUC, 0.50 coin flip to 1.00 perfect · source: %s · detector: %s", m.SourceColumn, m.Detector)
	lo := 0.5
	for _, v := range []float64{m.Headline, m.MeasurementsOnly, m.SourceOnly, m.MeasurementsMin} {
		if v != 0 && v < lo {
			lo = v - 0.02 // a weak score can land a little under 0.50
		}
	}
	p.X.Min, p.X.Max = lo, 1.0
	p.Y.Min, p.Y.Max = 0, 1.6 // the legend sits above the marks
	p.HideY()
	p.Add(plotter.NewGrid())

	const y = 0.45
	vline := func(x float64, dashes []vg.Length, c color.Color, label string) error {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0.05}, {X: x, Y: 0.95}})
		if err != nil {
			return err
		}
		l.Color, l.Dashes, l.Width = c, dashes, vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(label, l)
		return nil
	}
	grey := color.Gray{Y: 110}
	if err := vline(m.Floor, []vg.Length{vg.Points(5), vg.Points(3)}, grey,
		fmt.Sprintf("floor %.2f (the authors' default is 0.65)", m.Floor)); err != nil {
		return nil, err
	}
	if bx := m.Band * m.Headline; bx >= lo {
		if err := vline(bx, []vg.Length{vg.Points(1), vg.Points(2)}, color.RGBA{R: 180, A: 255},
			fmt.Sprintf("band: source-only = %.2f × headline", m.Band)); err != nil {
			return nil, err
		}
	}
	if m.CI95 != nil {
		ci, err := plotter.NewLine(plotter.XYs{{X: m.CI95[0], Y: y + 0.2}, {X: m.CI95[1], Y: y + 0.2}})
		if err != nil {
			return nil, err
		}
		ci.Width = vg.Points(2)
		p.Add(ci)
		p.Legend.Add(fmt.Sprintf("headline 95%% interval %.3f to %.3f", m.CI95[0], m.CI95[1]), ci)
	}
	if m.MeasurementsMin != 0 {
		rg, err := plotter.NewLine(plotter.XYs{{X: m.MeasurementsMin, Y: y}, {X: m.MeasurementsOnly, Y: y}})
		if err != nil {
			return nil, err
		}
		rg.Width = vg.Points(2)
		rg.Color = color.RGBA{B: 160, A: 255}
		p.Add(rg)
	}
	mark := func(x, yy float64, shape draw.GlyphDrawer, c color.Color, label string) error {
		s, err := plotter.NewScatter(plotter.XYs{{X: x, Y: yy}})
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Shape: shape, Radius: vg.Points(6), Color: c}
		p.Add(s)
		p.Legend.Add(label, s)
		return nil
	}
	for _, mk := range []struct {
		x, y  float64
		shape draw.GlyphDrawer
		c     color.Color
		label string
	}{
		{m.Headline, y + 0.2, draw.CircleGlyph{}, color.Black, headLabel},
		{m.MeasurementsOnly, y, draw.SquareGlyph{}, color.RGBA{B: 160, A: 255}, measLabel},
		{m.SourceOnly, y - 0.2, draw.TriangleGlyph{}, color.RGBA{R: 200, G: 90, A: 255}, srcLabel},
	} {
		if err := mark(mk.x, mk.y, mk.shape, mk.c, mk.label); err != nil {
			return nil, err
		}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	wt, err := p.WriterTo(width, height, format)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
