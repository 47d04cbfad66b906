package sim_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/sim"
	"github.com/strata-dev/strata/internal/sim/trace"
)

func sampleResult(t *testing.T) *sim.Result {
	nodes := []trace.Node{gpuNode("a", 16000, 4), gpuNode("b", 16000, 2)}
	pods := []trace.Pod{gpuPod("x", 300, 0, 5), gpuPod("y", 1000, 1, 9), gpuPod("z", 2000, 2, 4)}
	return run(t, sim.Config{Nodes: nodes, Pods: pods, Mode: sim.ModeInflation, Policy: "FGD", Seed: 42})
}

func TestWriters(t *testing.T) {
	r := sampleResult(t)
	var buf bytes.Buffer
	if err := sim.WriteSeriesCSV(&buf, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != len(r.Series)+1 || rows[0][3] != "arrived_gpu_pct" || rows[1][0] != "FGD" {
		t.Fatalf("series csv: %v, %d rows", err, len(rows))
	}
	buf.Reset()
	if err := sim.WriteSummaryCSV(&buf, r, r); err != nil || strings.Count(buf.String(), "\n") != 3 || !strings.HasPrefix(buf.String(), "policy,mode,seed") {
		t.Fatalf("summary csv: %v\n%s", err, buf.String())
	}
	buf.Reset()
	if err := sim.WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var back sim.Result
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back.GPUAlloc != r.GPUAlloc || len(back.Series) != len(r.Series) {
		t.Fatalf("json round trip: %v", err)
	}
}

func TestPlotPNG(t *testing.T) {
	r := sampleResult(t)
	var buf bytes.Buffer
	if err := sim.AllocationPlot(r).WritePNG(&buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 900 || b.Dy() != 560 {
		t.Fatalf("size %v", b)
	}
	// The GPU curve is drawn: some pixel has the GPU colour.
	found := false
	for y := 0; y < 560 && !found; y++ {
		for x := 0; x < 900 && !found; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			found = r>>8 == uint32(sim.ColorGPU.R) && g>>8 == uint32(sim.ColorGPU.G) && b>>8 == uint32(sim.ColorGPU.B)
		}
	}
	if !found {
		t.Fatal("no GPU curve in the image")
	}
}

// TestPlotsAreLabelled: both kinds of plot name their axes and every line,
// and the image carries that text (ink in the axis-label and legend strips)
// and the right axis of a replay (pods waiting).
func TestPlotsAreLabelled(t *testing.T) {
	replay := run(t, sim.Config{Nodes: []trace.Node{gpuNode("a", 8000, 1)}, Mode: sim.ModeReplay,
		Pods: []trace.Pod{gpuPod("a", 1000, 0, 3600), gpuPod("b", 1000, 60, 7200), gpuPod("c", 500, 120, trace.Absent)}})
	for _, tc := range []struct {
		name string
		plot *sim.Plot
	}{{"inflation", sim.PlotFor(sampleResult(t))}, {"replay", sim.PlotFor(replay)}} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.plot
			if p.X.Label == "" || p.Y.Label == "" || p.Title == "" || len(p.Lines) < 3 {
				t.Fatalf("plot %+v lacks labels or lines", p)
			}
			right := false
			for _, l := range p.Lines {
				if l.Label == "" {
					t.Fatalf("a line has no legend label: %+v", l)
				}
				right = right || l.Right
			}
			if right != (tc.name == "replay") || (right && p.Y2.Label == "") {
				t.Fatalf("right axis: %v, label %q", right, p.Y2.Label)
			}
			img := p.Image()
			dark := func(x0, y0, x1, y1 int) int {
				n := 0
				for y := y0; y < y1; y++ {
					for x := x0; x < x1; x++ {
						if c := img.RGBAAt(x, y); c.R < 0x50 && c.G < 0x50 && c.B < 0x50 {
							n++
						}
					}
				}
				return n
			}
			w, h := p.Width, p.Height
			for _, strip := range []struct {
				what           string
				x0, y0, x1, y1 int
			}{
				{"y axis label", 0, 0, 20, h},
				{"x axis label", 0, h - 24, w, h},
				{"legend", 0, 30, w, 52},
				{"title", 0, 0, w, 24},
			} {
				if n := dark(strip.x0, strip.y0, strip.x1, strip.y1); n < 40 {
					t.Errorf("%s: %d dark pixels, want text", strip.what, n)
				}
			}
			if tc.name == "replay" && dark(w-20, 0, w, h) < 40 {
				t.Errorf("no right axis label")
			}
		})
	}
}
