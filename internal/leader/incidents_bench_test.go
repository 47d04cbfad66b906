package leader

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
)

// benchCell is a leader's state of 10,000 nodes in 250 racks with 100,000
// running allocations of 100 workloads.
func benchCell(b *testing.B) *incidentCell {
	c := &incidentCell{now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	c.rig = newRig(b, Config{Now: func() time.Time { return c.now }})
	for w := range 100 {
		name := fmt.Sprintf("w%d", w)
		c.propose(&fsm.UpsertWorkload{Workload: &api.Workload{Name: name, SubmitTime: c.now,
			Groups: []*api.TaskGroup{{Name: "g", Replicas: 1000, Tasks: []*api.Task{{Name: "t", Driver: "mock"}}}}},
			Eval: &api.Evaluation{ID: "e-" + name, Workload: name, Status: api.EvalComplete, TriggeredBy: "bench"}})
	}
	var place []*api.Allocation
	var running []*api.AllocUpdate
	for n := range 10000 {
		id, name := fmt.Sprintf("node-%05d", n), fmt.Sprintf("n%05d", n)
		c.propose(&fsm.UpsertNode{Node: &api.Node{ID: id, Name: name, Status: api.NodeReady,
			Labels:   map[string]string{api.LabelRack: fmt.Sprintf("r%03d", n/40), api.LabelZone: fmt.Sprintf("z%d", n/2500)},
			Capacity: api.Resources{CPUMilli: 32000, MemoryBytes: 128 << 30, DiskBytes: 1 << 40, NetMbps: 10000}}, Time: c.now})
		for k := range 10 {
			a := planAlloc(fmt.Sprintf("a-%05d-%d", n, k), id, 100, false)
			a.Workload, a.NodeName, a.WorkloadVersion = fmt.Sprintf("w%d", (n*10+k)%100), name, 1
			place = append(place, a)
			running = append(running, &api.AllocUpdate{ID: a.ID, ClientStatus: api.AllocRunning})
		}
	}
	for len(place) > 0 {
		batch := place[:min(len(place), 5000)]
		place = place[len(batch):]
		parts, err := fsm.PlanParts(&fsm.ApplyPlan{Place: batch, Time: c.now}, fsm.MaxPlanPartBytes, func(string) fsm.StoppedAlloc { return fsm.StoppedAlloc{} })
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.p.ProposePlan(parts); err != nil {
			b.Fatal(err)
		}
	}
	for len(running) > 0 {
		batch := running[:min(len(running), 5000)]
		running = running[len(batch):]
		c.propose(&fsm.AllocClientUpdate{Updates: batch, Time: c.now})
	}
	c.pass() // the term's first pass: the census, every allocation seen
	return c
}

// BenchmarkIncidentsPassCalm is one pass of the incidents loop over a cell
// of 100,000 allocations with nothing new: the allocations' task states
// read for restarts, nothing counted.
func BenchmarkIncidentsPassCalm(b *testing.B) {
	c := benchCell(b)
	b.ResetTimer()
	for b.Loop() {
		c.now = c.now.Add(5 * time.Second)
		if cmds := c.l.correlation.pass(); len(cmds) != 0 {
			b.Fatalf("a calm pass proposed %d commands", len(cmds))
		}
	}
}

// BenchmarkIncidentsPassStorm is a pass in a storm: every 5 s, the 400
// allocations of one rack restart again. The pass reads the allocations
// that changed, counts the census again when it is older than 15 s (every
// third pass), steps the engine, and the rack's incident grows.
func BenchmarkIncidentsPassStorm(b *testing.B) {
	c := benchCell(b)
	restarts := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		restarts++
		var ups []*api.AllocUpdate
		for n := 400; n < 440; n++ {
			for k := range 10 {
				ups = append(ups, &api.AllocUpdate{ID: fmt.Sprintf("a-%05d-%d", n, k), ClientStatus: api.AllocRunning,
					TaskStates: map[string]*api.TaskState{"t": {State: "running", Restarts: restarts, StartedAt: c.now}}})
			}
		}
		c.propose(&fsm.AllocClientUpdate{Updates: ups, Time: c.now})
		c.now = c.now.Add(5 * time.Second)
		b.StartTimer()
		c.l.correlation.pass()
	}
	b.StopTimer()
	if in := c.l.Incidents(api.IncidentOpen); len(in) != 1 || in[0].Cause.Value != "r010" {
		b.Fatalf("incidents %+v, want rack r010's", in)
	}
}

// BenchmarkIncidentsPassFirst is a term's first pass over a cell of
// 100,000 allocations: every allocation seen once, the census counted,
// the events replayed.
func BenchmarkIncidentsPassFirst(b *testing.B) {
	c := benchCell(b)
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		c.l.correlation.begin()
		b.StartTimer()
		c.l.correlation.pass()
	}
}
