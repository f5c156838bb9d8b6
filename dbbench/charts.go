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

// chart is one figure of the Markdown report.
type chart struct {
	file  string
	title string
	svg   []byte
}

// charts draws the report's figures as SVG.
func charts(rep *Report) ([]chart, error) {
	var out []chart
	add := func(file, title string, p *plot.Plot, w, h vg.Length) error {
		c := vgsvg.New(w, h)
		p.Draw(draw.New(c))
		var b bytes.Buffer
		if _, err := c.WriteTo(&b); err != nil {
			return fmt.Errorf("dbbench: draw %s: %w", file, err)
		}
		out = append(out, chart{file: file, title: title, svg: b.Bytes()})
		return nil
	}

	p, err := throughputChart(rep)
	if err != nil {
		return nil, err
	}
	if err := add("throughput.svg", "Insert throughput as the table grows", p, 7*vg.Inch, 4.5*vg.Inch); err != nil {
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
		if err := add(b.file, b.title, p, 7*vg.Inch, h); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func throughputChart(rep *Report) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Insert throughput as the table grows"
	p.X.Label.Text = "rows inserted"
	p.Y.Label.Text = "rows per second (per chunk)"
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	top := 0.0
	for i, r := range rep.Results {
		if len(r.Curve) == 0 {
			continue
		}
		for _, c := range r.Curve {
			top = max(top, c.RowsPerSec)
		}
		xys := make(plotter.XYs, len(r.Curve))
		for j, c := range r.Curve {
			xys[j] = plotter.XY{X: float64(c.Rows), Y: c.RowsPerSec}
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("dbbench: throughput chart: %w", err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		pts.Color = plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		pts.Radius = vg.Points(2)
		p.Add(l, pts)
		p.Legend.Add(r.Scheme, l, pts)
	}
	// Headroom for the legend above the curves.
	p.Y.Max = top * (1.1 + 0.07*float64(len(rep.Results)))
	return p, nil
}

func barChart(title, axis string, names []string, vals plotter.Values) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = axis
	p.X.Min = 0
	p.Add(plotter.NewGrid())
	bc, err := plotter.NewBarChart(vals, vg.Points(14))
	if err != nil {
		return nil, fmt.Errorf("dbbench: %s chart: %w", title, err)
	}
	bc.Horizontal = true
	bc.Color = color.RGBA{R: 0x3b, G: 0x6e, B: 0xa5, A: 0xff}
	bc.LineStyle.Width = 0
	p.Add(bc)
	// Values at the end of each bar, so the figure can be read without the
	// table.
	labels := make([]string, len(vals))
	xys := make(plotter.XYs, len(vals))
	for i, v := range vals {
		labels[i] = fmt.Sprintf(" %.1f", v)
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
	p.X.Max = max * 1.15
	p.NominalY(names...)
	return p, nil
}
