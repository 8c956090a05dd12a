package audit

import (
	"errors"
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot draws the audit as the paper does: the three scores as marks on one
// 0.5–1.0 ruler (circle: headline, with its 95% interval; square:
// measurements-only, a range for DetectorEach; triangle: source-only), with
// the floor, and the band drawn where it falls on the ruler: the
// source-only score at which L reaches the band, band × headline. The
// format follows the extension, .png or .svg.
func (r Report) Plot(path string) error {
	if r.Skip != "" {
		return errors.New("audit: no chart: " + r.Skip)
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("audit: chart %s: want a .png or .svg file", path)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: L %.2f (lowest possible %.2f)", r.Verdict, r.L, r.LMin)
	if !r.Reading.FloorPassed {
		p.Title.Text = fmt.Sprintf("%s: L %.2f printed, not read (lowest possible %.2f)", r.Verdict, r.L, r.LMin)
	}
	p.X.Label.Text = fmt.Sprintf("AUC, 0.50 coin flip to 1.00 perfect · source: %s", r.SourceColumn)
	lo := 0.5
	for _, v := range []float64{r.Headline, r.MeasurementsOnly, r.SourceOnly, r.MeasurementsMin} {
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
	if err := vline(r.Rule.Floor, []vg.Length{vg.Points(5), vg.Points(3)}, grey,
		fmt.Sprintf("floor %.2f (the authors' default is 0.65)", r.Rule.Floor)); err != nil {
		return err
	}
	if bx := r.Rule.Band * r.Headline; bx >= lo {
		if err := vline(bx, []vg.Length{vg.Points(1), vg.Points(2)}, color.RGBA{R: 180, A: 255},
			fmt.Sprintf("band: source-only = %.2f × headline", r.Rule.Band)); err != nil {
			return err
		}
	}
	if r.BootstrapN > 0 {
		ci, err := plotter.NewLine(plotter.XYs{{X: r.CI95[0], Y: y + 0.2}, {X: r.CI95[1], Y: y + 0.2}})
		if err != nil {
			return err
		}
		ci.Width = vg.Points(2)
		p.Add(ci)
		p.Legend.Add("headline 95% interval", ci)
	}
	if r.Detector == DetectorEach {
		rg, err := plotter.NewLine(plotter.XYs{{X: r.MeasurementsMin, Y: y}, {X: r.MeasurementsOnly, Y: y}})
		if err != nil {
			return err
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
	for _, m := range []struct {
		x, y  float64
		shape draw.GlyphDrawer
		c     color.Color
		label string
	}{
		{r.Headline, y + 0.2, draw.CircleGlyph{}, color.Black, fmt.Sprintf("headline %.3f", r.Headline)},
		{r.MeasurementsOnly, y, draw.SquareGlyph{}, color.RGBA{B: 160, A: 255}, fmt.Sprintf("measurements-only %.3f", r.MeasurementsOnly)},
		{r.SourceOnly, y - 0.2, draw.TriangleGlyph{}, color.RGBA{R: 200, G: 90, A: 255}, fmt.Sprintf("source-only %.3f", r.SourceOnly)},
	} {
		if err := mark(m.x, m.y, m.shape, m.c, m.label); err != nil {
			return err
		}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	return p.Save(8*vg.Inch, 4*vg.Inch, path)
}
