package sim

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
)

// Line is one curve of a plot: (x, y) points in data units.
type Line struct {
	Color  color.RGBA
	Points [][2]float64
}

// Plot is a line chart drawn with the standard library only: axes, a
// light grid every 10 units, tick labels in a built-in 3×5 digit font.
type Plot struct {
	Width, Height int
	XMax, YMax    float64 // axes run from 0 to these
	Lines         []Line
}

// Curve colours of AllocationPlot.
var (
	ColorGPU = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	ColorCPU = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	ColorMem = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
)

// AllocationPlot charts GPU (red), CPU (blue) and memory (green) allocation
// against the arrived GPU workload, both in % (the paper's Fig. 9 shape).
func AllocationPlot(r *Result) *Plot {
	p := &Plot{Width: 800, Height: 500, XMax: 10, YMax: 100}
	gpu, cpu, mem := Line{Color: ColorGPU}, Line{Color: ColorCPU}, Line{Color: ColorMem}
	for _, pt := range r.Series {
		p.XMax = math.Max(p.XMax, pt.ArrivedGPU)
		gpu.Points = append(gpu.Points, [2]float64{pt.ArrivedGPU, pt.GPUAlloc})
		cpu.Points = append(cpu.Points, [2]float64{pt.ArrivedGPU, pt.CPUAlloc})
		mem.Points = append(mem.Points, [2]float64{pt.ArrivedGPU, pt.MemAlloc})
	}
	p.XMax = math.Ceil(p.XMax/10) * 10
	p.Lines = []Line{mem, cpu, gpu}
	return p
}

const plotMargin = 40

// Image renders the plot.
func (p *Plot) Image() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, p.Width, p.Height))
	fill(img, img.Bounds(), color.RGBA{0xff, 0xff, 0xff, 0xff})
	x0, y0 := plotMargin, p.Height-plotMargin // origin in pixels
	w, h := p.Width-2*plotMargin, p.Height-2*plotMargin
	px := func(x, y float64) (int, int) {
		return x0 + int(math.Round(x/p.XMax*float64(w))), y0 - int(math.Round(y/p.YMax*float64(h)))
	}
	grid, axis, ink := color.RGBA{0xe0, 0xe0, 0xe0, 0xff}, color.RGBA{0x40, 0x40, 0x40, 0xff}, color.RGBA{0x20, 0x20, 0x20, 0xff}
	for v := 0.0; v <= p.XMax+1e-9; v += 10 {
		x, _ := px(v, 0)
		line(img, x, y0, x, y0-h, grid)
		drawNumber(img, int(v), x, y0+6, ink)
	}
	for v := 0.0; v <= p.YMax+1e-9; v += 10 {
		_, y := px(0, v)
		line(img, x0, y, x0+w, y, grid)
		drawNumber(img, int(v), x0-16, y-3, ink)
	}
	line(img, x0, y0, x0+w, y0, axis)
	line(img, x0, y0, x0, y0-h, axis)
	for _, l := range p.Lines {
		for i := 1; i < len(l.Points); i++ {
			ax, ay := px(l.Points[i-1][0], l.Points[i-1][1])
			bx, by := px(l.Points[i][0], l.Points[i][1])
			line(img, ax, ay, bx, by, l.Color)
			line(img, ax, ay-1, bx, by-1, l.Color) // 2 px thick
		}
	}
	return img
}

// WritePNG encodes the plot as PNG.
func (p *Plot) WritePNG(w io.Writer) error {
	if err := png.Encode(w, p.Image()); err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	return nil
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
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

// digits is a 3×5 bitmap font: each digit is 5 rows of 3 bits.
var digits = [10][5]uint8{
	{7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
	{7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
}

// drawNumber writes n with its left edge at x, top at y.
func drawNumber(img *image.RGBA, n, x, y int, c color.RGBA) {
	s := fmt.Sprint(n)
	for i, ch := range s {
		d := digits[ch-'0']
		for row := 0; row < 5; row++ {
			for col := 0; col < 3; col++ {
				if d[row]&(4>>col) != 0 {
					img.SetRGBA(x+i*4+col, y+row, c)
				}
			}
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
