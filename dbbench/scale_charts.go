package dbbench

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// scaleCharts draws the figures of a Scale: rows/s and leaf density against the number of
// nodes, and the throughput curve of the largest table on a log-scaled row axis.
func scaleCharts(s *Scale) ([]chart, error) {
	var out []chart
	const legendWidth = 2.0 * vg.Inch
	add := func(file, title string, p *plot.Plot, legend plot.Legend) error {
		c, err := renderChart(file, title, 8*vg.Inch, 4*vg.Inch, func(dc draw.Canvas) {
			p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
			legend.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-legendWidth+0.15*vg.Inch, 0, 0, -0.4*vg.Inch))
		})
		if err == nil {
			out = append(out, c)
		}
		return err
	}
	if len(s.Fleet) > 0 {
		figs := []struct {
			file, title, axis string
			value             func(Result) (float64, bool)
		}{
			{"fleet-rows-per-sec.svg", "Insert throughput against the number of nodes", "rows per second",
				func(r Result) (float64, bool) { return r.RowsPerSec, r.RowsPerSec > 0 }},
			{"fleet-leaf-density.svg", "B-tree leaf density against the number of nodes", "average leaf density, %",
				func(r Result) (float64, bool) {
					if r.AvgLeafDensity == nil {
						return 0, false
					}
					return *r.AvgLeafDensity, true
				}},
		}
		for _, f := range figs {
			p, legend, err := fleetChart(s, f.title, f.axis, f.value)
			if err != nil {
				return nil, err
			}
			if p == nil {
				continue
			}
			if err := add(f.file, f.title, p, legend); err != nil {
				return nil, err
			}
		}
	}
	if len(s.Sizes) > 0 {
		p, legend, err := sizeChart(s.Sizes[len(s.Sizes)-1].Report)
		if err != nil {
			return nil, err
		}
		if err := add("size-throughput.svg", "Insert throughput as the table grows (log rows)", p, legend); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fleetChart plots value against the number of nodes on a log2 axis, one line per scheme;
// nil when no run has the value.
func fleetChart(s *Scale, title, axis string, value func(Result) (float64, bool)) (*plot.Plot, plot.Legend, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "nodes writing the table (log scale)"
	p.Y.Label.Text = axis
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for _, r := range s.Fleet {
		ticks = append(ticks, plot.Tick{Value: float64(r.Nodes), Label: strconv.Itoa(r.Nodes)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Marker = thousandsTicks{}
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	drawn := false
	for i, name := range schemeNames(s.Fleet) {
		var xys plotter.XYs
		for _, r := range s.Fleet {
			if res, ok := result(r.Report, name); ok {
				if v, ok := value(res); ok {
					xys = append(xys, plotter.XY{X: float64(r.Nodes), Y: v})
				}
			}
		}
		if len(xys) == 0 {
			continue
		}
		drawn = true
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, legend, fmt.Errorf("dbbench: %s chart: %w", title, err)
		}
		styleSeries(l, pts, i)
		p.Add(l, pts)
		legend.Add(name, l, pts)
	}
	if !drawn {
		return nil, legend, nil
	}
	if p.X.Min == p.X.Max { // one node count: give the log axis some width
		p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
	}
	return p, legend, nil
}

// sizeChart plots each scheme's throughput per chunk against rows inserted on a log axis,
// with a dotted vertical line in the scheme's colour where its index reaches shared_buffers.
func sizeChart(rep *Report) (*plot.Plot, plot.Legend, error) {
	p, legend, err := throughputChart(rep)
	if err != nil {
		return nil, legend, err
	}
	p.Title.Text = "Insert throughput as the table grows (log rows)"
	p.X.Label.Text = "rows inserted (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logThousandsTicks{}
	_, _, cache, ok := pageCache(rep.Settings)
	if !ok {
		return p, legend, nil
	}
	top := 0.0
	for _, r := range rep.Results {
		for _, c := range r.Curve {
			top = math.Max(top, c.RowsPerSec)
		}
	}
	for i, r := range rep.Results {
		at, in := cacheCrossing(r, cache)
		if !in || len(r.Curve) == 0 || at < r.Curve[0].Rows {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: float64(at), Y: 0}, {X: float64(at), Y: top}})
		if err != nil {
			return nil, legend, fmt.Errorf("dbbench: size chart: %w", err)
		}
		l.Color = palette[i%len(palette)]
		l.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
		l.Width = vg.Points(1.2)
		p.Add(l)
	}
	return p, legend, nil
}

// logThousandsTicks are gonum's log ticks (powers of ten) labelled with thousands separators.
type logThousandsTicks struct{}

func (logThousandsTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.LogTicks{Prec: -1}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = thousands(int64(ts[i].Value))
		}
	}
	return ts
}
