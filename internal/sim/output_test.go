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
	if err != nil || len(rows) != len(r.Series)+1 || rows[0][1] != "arrived_gpu_pct" {
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
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 500 {
		t.Fatalf("size %v", b)
	}
	// The GPU curve is drawn: some pixel has the GPU colour.
	found := false
	for y := 0; y < 500 && !found; y++ {
		for x := 0; x < 800 && !found; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			found = r>>8 == uint32(sim.ColorGPU.R) && g>>8 == uint32(sim.ColorGPU.G) && b>>8 == uint32(sim.ColorGPU.B)
		}
	}
	if !found {
		t.Fatal("no GPU curve in the image")
	}
}
