package dbbench

import (
	"bytes"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// chartSlack is the margin left and right of every chart for fonts wider than gonum measured.
const chartSlack = 0.6 * vg.Inch

// chart is one figure of the Markdown report.
type chart struct {
	file  string
	title string
	svg   []byte
}

// charts draws the report's figures as SVG.
func charts(rep *Report) ([]chart, error) {
	var out []chart
	add := func(file, title string, w, h vg.Length, paint func(draw.Canvas)) error {
		c, err := renderChart(file, title, w, h, paint)
		if err == nil {
			out = append(out, c)
		}
		return err
	}

	p, legend, err := throughputChart(rep)
	if err != nil {
		return nil, err
	}
	// The legend gets a column of its own to the right: inside the plot it hid the curves.
	const legendWidth = 2.3 * vg.Inch
	err = add("throughput.svg", "Insert throughput as the table grows", 9*vg.Inch, 4.5*vg.Inch, func(dc draw.Canvas) {
		p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
		legend.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-legendWidth+0.15*vg.Inch, 0, 0, -0.4*vg.Inch))
	})
	if err != nil {
		return nil, err
	}

	bars := []struct {
		file, title, axis string
		value             func(Result) (float64, bool)
	}{
		{"index-bytes-per-row.svg", "Primary-key index bytes per row", "bytes per row",
			func(r Result) (float64, bool) { return r.IndexBytesPerRow, true }},
		{"wal-bytes-per-row.svg", "WAL bytes per row", "bytes per row",
			func(r Result) (float64, bool) { return r.WALBytesPerRow, r.WALBytes > 0 }},
		{"leaf-density.svg", "B-tree leaf density", "average leaf density, %",
			func(r Result) (float64, bool) {
				if r.AvgLeafDensity == nil {
					return 0, false
				}
				return *r.AvgLeafDensity, true
			}},
	}
	if dialectOf(rep.Settings.Engine).Clustered {
		bars[0].title = "Clustered index (the table) bytes per row"
		bars[1].title = "Redo log bytes per row"
		bars[2].title = "Clustered-index leaf fill"
		bars[2].axis = "average leaf fill implied by the leaf pages, %"
	}
	for _, b := range bars {
		var names []string
		var vals plotter.Values
		for _, r := range rep.Results {
			v, ok := b.value(r)
			if !ok {
				continue
			}
			names = append(names, r.Scheme)
			vals = append(vals, v)
		}
		if len(vals) == 0 {
			continue
		}
		// NominalY counts from the bottom; reverse so the first scheme is on
		// top, as in the table.
		for i, j := 0, len(vals)-1; i < j; i, j = i+1, j-1 {
			names[i], names[j] = names[j], names[i]
			vals[i], vals[j] = vals[j], vals[i]
		}
		p, err := barChart(b.title, b.axis, names, vals)
		if err != nil {
			return nil, err
		}
		h := vg.Length(1.2+0.35*float64(len(vals))) * vg.Inch
		if err := add(b.file, b.title, 7*vg.Inch, h, p.Draw); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// renderChart draws one figure as SVG.
func renderChart(file, title string, w, h vg.Length, paint func(draw.Canvas)) (chart, error) {
	c := vgsvg.New(w, h)
	// gonum lays text out with Liberation Serif's metrics; a viewer without that font (or
	// the metric-compatible Times New Roman) substitutes a wider one, so leave slack
	// around the plot for labels that come out wider than measured.
	paint(draw.Crop(draw.New(c), chartSlack, -chartSlack/2, 0, 0))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return chart{}, fmt.Errorf("dbbench: draw %s: %w", file, err)
	}
	return chart{file: file, title: title, svg: b.Bytes()}, nil
}

// styleSeries gives series i of a chart its colour, dashes and point shape.
func styleSeries(l *plotter.Line, pts *plotter.Scatter, i int) {
	clr := palette[i%len(palette)]
	l.Color = clr
	l.Dashes = plotutil.Dashes(i)
	l.Width = vg.Points(1.5)
	pts.Color = clr
	pts.Shape = plotutil.Shape(i)
	pts.Radius = vg.Points(2)
}

// palette holds ten colours that stay apart (Tableau 10), so that up to ten rows never share
// one; dashes and point shapes tell rows apart in print as well.
var palette = []color.RGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0xe1, 0x57, 0x59, 0xff}, {0x76, 0xb7, 0xb2, 0xff},
	{0x59, 0xa1, 0x4f, 0xff}, {0xed, 0xc9, 0x48, 0xff}, {0xb0, 0x7a, 0xa1, 0xff}, {0xff, 0x9d, 0xa7, 0xff},
	{0x9c, 0x75, 0x5f, 0xff}, {0x79, 0x70, 0x6e, 0xff},
}

// thousandsTicks are gonum's default ticks labelled with thousands separators.
type thousandsTicks struct{}

func (thousandsTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = thousands(int64(ts[i].Value))
		}
	}
	return ts
}

// throughputChart plots rows/s per chunk against rows inserted, one line per row of the
// report, and returns the legend separately for the caller to place beside it.
func throughputChart(rep *Report) (*plot.Plot, plot.Legend, error) {
	p := plot.New()
	p.Title.Text = "Insert throughput as the table grows"
	p.X.Label.Text = "rows inserted"
	p.Y.Label.Text = "rows per second (per chunk)"
	p.X.Tick.Marker = thousandsTicks{}
	p.Y.Tick.Marker = thousandsTicks{}
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	for i, r := range rep.Results {
		if len(r.Curve) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(r.Curve))
		for j, c := range r.Curve {
			xys[j] = plotter.XY{X: float64(c.Rows), Y: c.RowsPerSec}
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, legend, fmt.Errorf("dbbench: throughput chart: %w", err)
		}
		styleSeries(l, pts, i)
		p.Add(l, pts)
		legend.Add(r.Scheme, l, pts)
	}
	return p, legend, nil
}

func barChart(title, axis string, names []string, vals plotter.Values) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = axis
	p.X.Min = 0
	p.X.Tick.Marker = thousandsTicks{}
	p.Add(plotter.NewGrid())
	bc, err := plotter.NewBarChart(vals, vg.Points(14))
	if err != nil {
		return nil, fmt.Errorf("dbbench: %s chart: %w", title, err)
	}
	bc.Horizontal = true
	bc.Color = color.RGBA{R: 0x3b, G: 0x6e, B: 0xa5, A: 0xff}
	bc.LineStyle.Width = 0
	p.Add(bc)
	// Value and row name at the end of each bar, so the figure can be read without the table.
	// The names are not y-axis tick labels: gonum places right-aligned text by its measured
	// width, so a viewer's wider substitute font would run it under the bars; text that
	// starts at the bar's end has room to grow.
	labels := make([]string, len(vals))
	xys := make(plotter.XYs, len(vals))
	for i, v := range vals {
		labels[i] = fmt.Sprintf(" %.1f  %s", v, names[i])
		xys[i] = plotter.XY{X: v, Y: float64(i)}
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return nil, fmt.Errorf("dbbench: %s chart: %w", title, err)
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].YAlign = -0.5
	}
	p.Add(lb)
	max := 0.0
	for _, v := range vals {
		if v > max {
			max = v
		}
	}
	p.X.Max = max * 1.6
	p.HideY()
	return p, nil
}
