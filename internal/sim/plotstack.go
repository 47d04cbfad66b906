package sim

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
)

// Colours of the autoscaling plots.
var (
	ColorUsage    = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	ColorLimit    = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
	ColorBaseline = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	ColorBreach   = color.RGBA{0x94, 0x67, 0xbd, 0xff}
)

// WritePNGStack encodes plots one above the other in one PNG, as wide as
// the widest.
func WritePNGStack(w io.Writer, plots ...*Plot) error {
	if len(plots) == 0 {
		return fmt.Errorf("write png: no plot")
	}
	width, height := 0, 0
	imgs := make([]*image.RGBA, len(plots))
	for k, p := range plots {
		imgs[k] = p.Image()
		width = max(width, imgs[k].Bounds().Dx())
		height += imgs[k].Bounds().Dy()
	}
	out := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(out, out.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	y := 0
	for _, img := range imgs {
		r := img.Bounds()
		draw.Draw(out, image.Rect(0, y, r.Dx(), y+r.Dy()), img, r.Min, draw.Src)
		y += r.Dy()
	}
	if err := png.Encode(w, out); err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	return nil
}
