package cluster

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/strata-dev/strata/internal/sim/trace"
)

// TestRejectAgreesWithFits: Reject is Fits with words; on random nodes and
// pods they must never disagree.
func TestRejectAgreesWithFits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	models := []string{"", "V100", "A100"}
	var nodes []trace.Node
	for i := range 50 {
		m := models[r.IntN(3)]
		g := 0
		if m != "" {
			g = 1 + r.IntN(8)
		}
		nodes = append(nodes, trace.Node{Name: fmt.Sprint("n", i), CPUMilli: int64(8000 + r.IntN(64000)), MemoryMiB: 65536, GPUs: g, GPUModel: m})
	}
	c, err := New(nodes)
	if err != nil {
		t.Fatal(err)
	}
	pod := func() trace.Pod {
		p := trace.Pod{Name: "p", CPUMilli: int64(r.IntN(16000)), MemoryMiB: int64(r.IntN(32768))}
		switch r.IntN(3) {
		case 1:
			p.NumGPU, p.GPUMilli = 1, int64(100*(1+r.IntN(9)))
		case 2:
			p.NumGPU, p.GPUMilli = 1+r.IntN(4), 1000
		}
		if r.IntN(4) == 0 {
			p.GPUSpec = []string{models[1+r.IntN(2)]}
		}
		p.Job, p.DistinctNode = int64(r.IntN(3)), r.IntN(2) == 0
		return p
	}
	for step := range 2000 {
		p := pod()
		for i := range c.NumNodes() {
			if fits, why := c.Fits(i, &p), c.Reject(i, &p); fits != (why == "") {
				t.Fatalf("step %d node %d pod %+v: Fits %v, Reject %q", step, i, p, fits, why)
			}
		}
		if i := r.IntN(c.NumNodes()); c.Fits(i, &p) {
			var gpus GPUSet
			if p.NumGPU > 0 {
				gpus = c.Node(i).DefaultGPUs(&p)
			}
			if _, err := c.Assign(&p, PlacementFor(i, &p, gpus)); err != nil {
				t.Fatal(err)
			}
		}
	}
}
