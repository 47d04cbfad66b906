package sim

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Line is one curve of a plot: (x, y) points in data units, named in the
// legend. A line on the right axis is read against Plot.Y2.
type Line struct {
	Label  string
	Color  color.RGBA
	Points [][2]float64
	Right  bool
}

// Axis is one axis of a plot: its label and its range, from 0 to Max.
type Axis struct {
	Label string
	Max   float64
}

// Plot is a line chart drawn with the standard library and a bitmap font:
// a title, labelled axes with ticks at round values and a light grid, an
// optional right axis, and a legend naming every line.
type Plot struct {
	Width, Height int
	Title         string
	X, Y          Axis
	Y2            Axis // used when a line is on the right
	Lines         []Line
}

// Curve colours.
var (
	ColorGPU     = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	ColorCPU     = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	ColorMem     = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
	ColorWaiting = color.RGBA{0x94, 0x67, 0xbd, 0xff}
)

// PlotFor is the plot of a run: allocation against the arrived GPU
// workload for inflation, allocation and waiting pods over time for replay.
func PlotFor(r *Result) *Plot {
	if r.Mode == ModeReplay {
		return UtilisationPlot(r)
	}
	return AllocationPlot(r)
}

// AllocationPlot charts GPU, CPU and memory allocation against the arrived
// GPU workload, both in % (the paper's Fig. 9 shape).
func AllocationPlot(r *Result) *Plot {
	p := &Plot{Width: 900, Height: 560, Title: fmt.Sprintf("%s, inflation, seed %d", r.Policy, r.Seed),
		X: Axis{Label: "arrived GPU workload (% of GPU capacity)", Max: 10},
		Y: Axis{Label: "allocated (% of capacity)", Max: 100}}
	gpu := Line{Label: "GPU", Color: ColorGPU}
	cpu := Line{Label: "CPU", Color: ColorCPU}
	mem := Line{Label: "memory", Color: ColorMem}
	for _, pt := range r.Series {
		p.X.Max = math.Max(p.X.Max, pt.ArrivedGPU)
		gpu.Points = append(gpu.Points, [2]float64{pt.ArrivedGPU, pt.GPUAlloc})
		cpu.Points = append(cpu.Points, [2]float64{pt.ArrivedGPU, pt.CPUAlloc})
		mem.Points = append(mem.Points, [2]float64{pt.ArrivedGPU, pt.MemAlloc})
	}
	p.Lines = []Line{gpu, cpu, mem}
	return p
}

// UtilisationPlot charts a replay over trace time: the allocated share of
// CPU, memory and (when the cell has any) GPU capacity of the machines that
// are up, and the pods waiting for room on a right axis.
func UtilisationPlot(r *Result) *Plot {
	var t0 int64
	if len(r.Series) > 1 {
		t0 = r.Series[1].Time // Series[0] is the empty cell before the first event
	}
	p := &Plot{Width: 900, Height: 560, Title: fmt.Sprintf("%s, replay, seed %d: %d pods placed, %d evicted", r.Policy, r.Seed, r.Placed, r.Evicted+r.Evictions.Trace),
		X:  Axis{Label: fmt.Sprintf("hours since the first event (trace second %d)", t0), Max: 1},
		Y:  Axis{Label: "allocated (% of the capacity up)", Max: 100},
		Y2: Axis{Label: "pods waiting", Max: 10}}
	cpu := Line{Label: "CPU", Color: ColorCPU}
	mem := Line{Label: "memory", Color: ColorMem}
	gpu := Line{Label: "GPU", Color: ColorGPU}
	waiting := Line{Label: "pods waiting (right axis)", Color: ColorWaiting, Right: true}
	for k, pt := range r.Series {
		if k == 0 && len(r.Series) > 1 {
			continue
		}
		h := float64(pt.Time-t0) / 3600
		p.X.Max = math.Max(p.X.Max, h)
		p.Y2.Max = math.Max(p.Y2.Max, float64(pt.Pending))
		cpu.Points = append(cpu.Points, [2]float64{h, pt.CPUAlloc})
		mem.Points = append(mem.Points, [2]float64{h, pt.MemAlloc})
		gpu.Points = append(gpu.Points, [2]float64{h, pt.GPUAlloc})
		waiting.Points = append(waiting.Points, [2]float64{h, float64(pt.Pending)})
	}
	p.Lines = []Line{cpu, mem}
	if r.Capacity.GPUMilli > 0 {
		p.Lines = append(p.Lines, gpu)
	}
	p.Lines = append(p.Lines, waiting)
	return p
}

// Plot geometry, in pixels.
const (
	marginLeft   = 78
	marginRight  = 78
	marginTop    = 58
	marginBottom = 58
)

var face = basicfont.Face7x13

// Image renders the plot.
func (p *Plot) Image() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, p.Width, p.Height))
	fill(img, img.Bounds(), color.RGBA{0xff, 0xff, 0xff, 0xff})
	x0, y0 := marginLeft, p.Height-marginBottom // origin in pixels
	w, h := p.Width-marginLeft-marginRight, p.Height-marginTop-marginBottom
	xStep, xMax := niceAxis(p.X.Max)
	yStep, yMax := niceAxis(p.Y.Max)
	y2Step, y2Max := niceAxis(p.Y2.Max)
	px := func(x, y, ymax float64) (int, int) {
		return x0 + int(math.Round(x/xMax*float64(w))), y0 - int(math.Round(y/ymax*float64(h)))
	}
	grid, axis, ink := color.RGBA{0xe4, 0xe4, 0xe4, 0xff}, color.RGBA{0x40, 0x40, 0x40, 0xff}, color.RGBA{0x20, 0x20, 0x20, 0xff}
	for v := 0.0; v <= xMax*(1+1e-9); v += xStep {
		x, _ := px(v, 0, yMax)
		line(img, x, y0, x, y0-h, grid)
		line(img, x, y0, x, y0+4, axis)
		s := tickLabel(v, xStep)
		drawText(img, s, x-textWidth(s)/2, y0+18, ink)
	}
	for v := 0.0; v <= yMax*(1+1e-9); v += yStep {
		_, y := px(0, v, yMax)
		line(img, x0, y, x0+w, y, grid)
		line(img, x0-4, y, x0, y, axis)
		s := tickLabel(v, yStep)
		drawText(img, s, x0-8-textWidth(s), y+4, ink)
	}
	right := false
	for _, l := range p.Lines {
		right = right || l.Right
	}
	line(img, x0, y0, x0+w, y0, axis)
	line(img, x0, y0, x0, y0-h, axis)
	if right {
		line(img, x0+w, y0, x0+w, y0-h, axis)
		for v := 0.0; v <= y2Max*(1+1e-9); v += y2Step {
			_, y := px(0, v, y2Max)
			line(img, x0+w, y, x0+w+4, y, axis)
			drawText(img, tickLabel(v, y2Step), x0+w+8, y+4, ink)
		}
		drawTextUp(img, p.Y2.Label, p.Width-14, y0-h/2+textWidth(p.Y2.Label)/2, ink)
	}
	drawText(img, p.X.Label, x0+w/2-textWidth(p.X.Label)/2, p.Height-14, ink)
	drawTextUp(img, p.Y.Label, 16, y0-h/2+textWidth(p.Y.Label)/2, ink)
	drawText(img, p.Title, x0+w/2-textWidth(p.Title)/2, 18, ink)
	for _, l := range p.Lines {
		ymax := yMax
		if l.Right {
			ymax = y2Max
		}
		for i := 1; i < len(l.Points); i++ {
			ax, ay := px(l.Points[i-1][0], l.Points[i-1][1], ymax)
			bx, by := px(l.Points[i][0], l.Points[i][1], ymax)
			line(img, ax, ay, bx, by, l.Color)
			line(img, ax, ay-1, bx, by-1, l.Color) // 2 px thick
		}
	}
	p.legend(img, marginTop-14)
	return img
}

// legend names every line with a sample of its colour, in one row
// centred at y above the plot area, so that it never hides a curve.
func (p *Plot) legend(img *image.RGBA, y int) {
	const sample, gap = 24, 22
	wide := 0
	for _, l := range p.Lines {
		wide += sample + 6 + textWidth(l.Label) + gap
	}
	x := p.Width/2 - (wide-gap)/2
	for _, l := range p.Lines {
		for d := -1; d <= 1; d++ {
			line(img, x, y+d, x+sample, y+d, l.Color)
		}
		drawText(img, l.Label, x+sample+6, y+4, color.RGBA{0x20, 0x20, 0x20, 0xff})
		x += sample + 6 + textWidth(l.Label) + gap
	}
}

// niceAxis returns a tick step of 1, 2 or 5 × 10^k giving at most 10 ticks
// over 0..max, and max rounded up to a whole number of steps.
func niceAxis(maxV float64) (step, top float64) {
	if !(maxV > 0) || math.IsInf(maxV, 0) {
		maxV = 1
	}
	raw := maxV / 10
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	return step, math.Ceil(maxV/step-1e-9) * step
}

// tickLabel writes v with as many decimals as the step needs.
func tickLabel(v, step float64) string {
	decimals := 0
	if step < 1 {
		decimals = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

func textWidth(s string) int { return font.MeasureString(face, s).Ceil() }

// drawText writes s with its baseline's left end at (x, y).
func drawText(img *image.RGBA, s string, x, y int, c color.RGBA) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// drawTextUp writes s reading upwards, its first letter's foot at (x, y).
func drawTextUp(img *image.RGBA, s string, x, y int, c color.RGBA) {
	w, h := textWidth(s), face.Height
	tmp := image.NewRGBA(image.Rect(0, 0, w, h))
	drawText(tmp, s, 0, face.Ascent, c)
	for ty := 0; ty < h; ty++ {
		for tx := 0; tx < w; tx++ {
			if px := tmp.RGBAAt(tx, ty); px.A > 0 {
				if pt := (image.Point{x - h + ty, y - tx}); pt.In(img.Bounds()) {
					img.SetRGBA(pt.X, pt.Y, px)
				}
			}
		}
	}
}

// WritePNG encodes the plot as PNG.
func (p *Plot) WritePNG(w io.Writer) error {
	if err := png.Encode(w, p.Image()); err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	return nil
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

// line draws with Bresenham's algorithm; points outside the image are clipped.
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	err := dx + dy
	for {
		if (image.Point{x0, y0}).In(img.Bounds()) {
			img.SetRGBA(x0, y0, c)
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * err
		if e2 >= dy {
			err += dy
			x0 += sx
		}
		if e2 <= dx {
			err += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
