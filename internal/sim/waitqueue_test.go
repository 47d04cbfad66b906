package sim

import (
	"context"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/internal/sim/trace"
)

// TestWaitQueueIsTheWalk replays random traces twice, once with the wait
// queue's classes (a class sleeps when its first pod fits nowhere and wakes
// when a node that gained room fits it) and once offering room to every
// waiting pod in queue order on every pass, and requires the same results:
// the same placements in the same order, so the same pending times, the same
// series, the same evictions. The traces mix priorities, jobs with the
// different-machine constraint, pods that run for a time or end at one,
// request updates that shrink and grow, and machines that fail and return;
// the cells have GPUs or not. Random is left out: its failed attempts draw
// random numbers, so trying more pods changes its later draws.
func TestWaitQueueIsTheWalk(t *testing.T) {
	policies := []string{"BestFit", "FGD", "GpuPacking", "DotProd"}
	rapid.Check(t, func(t *rapid.T) {
		gpus := rapid.Bool().Draw(t, "gpus")
		nodes := make([]trace.Node, rapid.IntRange(1, 4).Draw(t, "nodes"))
		for i := range nodes {
			nodes[i] = trace.Node{Name: "n", CPUMilli: rapid.SampledFrom([]int64{4000, 8000}).Draw(t, "cpu"), MemoryMiB: 8192}
			if gpus {
				nodes[i].GPUs, nodes[i].GPUModel = rapid.IntRange(0, 2).Draw(t, "g"), "T4"
			}
		}
		var pods []trace.Pod
		for i, n := 0, rapid.IntRange(1, 80).Draw(t, "pods"); i < n; i++ {
			p := trace.Pod{Name: "p", CPUMilli: rapid.SampledFrom([]int64{500, 1000, 2000, 4000}).Draw(t, "pcpu"),
				MemoryMiB: rapid.SampledFrom([]int64{100, 1000, 4000}).Draw(t, "pmem"),
				Priority:  rapid.SampledFrom([]int{0, 0, 2, 9}).Draw(t, "prio"),
				Creation:  rapid.Int64Range(0, 60).Draw(t, "created"), Deletion: trace.Absent, Scheduled: trace.Absent}
			if gpus && rapid.IntRange(0, 3).Draw(t, "gpu") == 0 {
				p.NumGPU, p.GPUMilli = 1, rapid.SampledFrom([]int64{300, 1000}).Draw(t, "milli")
			}
			if job := rapid.IntRange(0, 3).Draw(t, "job"); job > 0 {
				p.Job, p.DistinctNode = int64(job), job == 1
			}
			switch rapid.IntRange(0, 3).Draw(t, "end") {
			case 0:
				p.RunsFor, p.Runtime = true, rapid.Int64Range(0, 40).Draw(t, "runtime")
			case 1, 2:
				p.Deletion = p.Creation + rapid.Int64Range(1, 80).Draw(t, "life")
			}
			p.CarriedOver = rapid.IntRange(0, 9).Draw(t, "carried") == 0
			for u := rapid.IntRange(0, 3).Draw(t, "updates"); u > 0; u-- {
				p.Updates = append(p.Updates, trace.Update{Time: p.Creation + rapid.Int64Range(0, 50).Draw(t, "at"),
					CPUMilli: rapid.SampledFrom([]int64{250, 1000, 3000}).Draw(t, "ucpu"), MemoryMiB: p.MemoryMiB, Priority: p.Priority})
			}
			pods = append(pods, p)
		}
		var events []trace.NodeEvent
		for k := rapid.IntRange(0, 4).Draw(t, "nodeEvents"); k > 0; k-- {
			i := rapid.IntRange(0, len(nodes)-1).Draw(t, "which")
			at := rapid.Int64Range(1, 80).Draw(t, "when")
			events = append(events, trace.NodeEvent{Time: at, Node: i, Kind: trace.NodeRemove},
				trace.NodeEvent{Time: at + rapid.Int64Range(1, 20).Draw(t, "back"), Node: i, Kind: trace.NodeAdd, CPUMilli: nodes[i].CPUMilli, MemoryMiB: nodes[i].MemoryMiB})
		}
		sortNodeEvents(events)
		cfg := Config{Nodes: nodes, Pods: pods, NodeEvents: events, Mode: ModeReplay, Seed: 5,
			Policy: rapid.SampledFrom(policies).Draw(t, "policy")}
		fast, err := run(context.Background(), cfg, false)
		if err != nil {
			t.Fatal(err)
		}
		walked, err := run(context.Background(), cfg, true)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, walked) {
			t.Fatalf("classes and walk differ:\nclasses %+v\nwalk    %+v", summary(fast), summary(walked))
		}
	})
}

func sortNodeEvents(ev []trace.NodeEvent) {
	for i := 1; i < len(ev); i++ {
		for j := i; j > 0 && ev[j].Time < ev[j-1].Time; j-- {
			ev[j], ev[j-1] = ev[j-1], ev[j]
		}
	}
}

func summary(r *Result) Result {
	s := *r
	s.Series, s.Frag = nil, nil
	return s
}
