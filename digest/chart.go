package digest

import (
	"bytes"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/burnrate/burnrate/quantity"
)

// The chart's size in points; at the PNG's 96 dpi it is 720 × 300 pixels,
// shown at 540 × 225 (so it stays sharp on high-density screens).
const (
	chartWidth  = vg.Length(540)
	chartHeight = vg.Length(225)
)

var (
	colorUnder = color.RGBA{R: 0x3b, G: 0x82, B: 0xf6, A: 0xff}
	colorOver  = color.RGBA{R: 0xdc, G: 0x26, B: 0x26, A: 0xff}
	colorLine  = color.RGBA{R: 0x1f, G: 0x29, B: 0x33, A: 0xff}
)

// ChartPNG draws ch as a PNG: a bar a day, red above the line, blue at or
// under it, and the line dashed across. Amounts become floats here only,
// for drawing.
func ChartPNG(ch Chart) ([]byte, error) {
	p := plot.New()
	p.Title.Text = "Daily spend, " + ch.Currency
	p.Y.Min = 0
	p.Y.Tick.Marker = moneyTicks{}
	under, over := make(plotter.Values, len(ch.Amounts)), make(plotter.Values, len(ch.Amounts))
	line := ch.Line.InexactFloat64()
	names := make([]string, len(ch.Days))
	for i, a := range ch.Amounts {
		v := a.InexactFloat64()
		if ch.Line.IsPositive() && a.GreaterThan(ch.Line) {
			over[i] = v
		} else {
			under[i] = v
		}
		if i%2 == (len(ch.Days)-1)%2 { // every other day, the last included
			names[i] = ch.Days[i].Format("Jan 2")
		}
	}
	width := vg.Points(18)
	for _, bars := range []struct {
		vs plotter.Values
		c  color.Color
	}{{under, colorUnder}, {over, colorOver}} {
		b, err := plotter.NewBarChart(bars.vs, width)
		if err != nil {
			return nil, fmt.Errorf("chart: %w", err)
		}
		b.Color, b.LineStyle.Width = bars.c, 0
		p.Add(b)
	}
	if ch.Line.IsPositive() {
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: line}, {X: float64(len(ch.Days)) - 0.5, Y: line}})
		if err != nil {
			return nil, fmt.Errorf("chart: %w", err)
		}
		l.Color, l.Width, l.Dashes = colorLine, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(ch.LineLabel, l)
		p.Legend.Top, p.Legend.Left = true, true
		if p.Y.Max < line*1.1 {
			p.Y.Max = line * 1.1
		}
	}
	p.NominalX(names...)
	p.Add(plotter.NewGrid())
	c := vgimg.New(chartWidth, chartHeight)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	return buf.Bytes(), nil
}

// moneyTicks labels the amount axis with plain thousands-separated numbers.
type moneyTicks struct{}

func (moneyTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = quantity.Group(fmt.Sprintf("%.0f", ts[i].Value))
		}
	}
	return ts
}
