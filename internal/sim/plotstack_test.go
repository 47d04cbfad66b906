package sim

import (
	"bytes"
	"image/png"
	"testing"
)

func TestWritePNGStack(t *testing.T) {
	a := &Plot{Width: 300, Height: 200, X: Axis{Max: 1}, Y: Axis{Max: 1}, Lines: []Line{{Label: "a", Color: ColorUsage, Points: [][2]float64{{0, 0}, {1, 1}}}}}
	b := &Plot{Width: 400, Height: 150, X: Axis{Max: 1}, Y: Axis{Max: 1}}
	var buf bytes.Buffer
	if err := WritePNGStack(&buf, a, b); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if r := img.Bounds(); r.Dx() != 400 || r.Dy() != 350 {
		t.Fatalf("stack %v, want 400 × 350: as wide as the widest, as tall as both", r)
	}
	if err := WritePNGStack(&buf); err == nil {
		t.Fatal("no plot: want an error")
	}
}
