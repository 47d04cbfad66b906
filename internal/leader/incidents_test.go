package leader

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
)

// incidentCell is a rig with 20 nodes in racks r1-r4 and ten allocations
// of ten workloads on each, all running, and a clock the test moves.
type incidentCell struct {
	*rig
	now time.Time
}

func newIncidentCell(t *testing.T) *incidentCell {
	c := &incidentCell{now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	c.rig = newRig(t, Config{Now: func() time.Time { return c.now }})
	for w := 1; w <= 10; w++ {
		name := fmt.Sprintf("w%d", w)
		c.propose(&fsm.UpsertWorkload{Workload: &api.Workload{Name: name, SubmitTime: c.now,
			Groups: []*api.TaskGroup{{Name: "g", Replicas: 20, Tasks: []*api.Task{{Name: "t", Driver: "mock"}}}}},
			Eval: &api.Evaluation{ID: "e-" + name, Workload: name, Status: api.EvalComplete, TriggeredBy: "test"}})
	}
	var place []*api.Allocation
	var running []*api.AllocUpdate
	for r := 1; r <= 4; r++ {
		for n := 1; n <= 5; n++ {
			id, name := fmt.Sprintf("node-r%dn%d", r, n), fmt.Sprintf("r%d-n%d", r, n)
			c.propose(&fsm.UpsertNode{Node: &api.Node{ID: id, Name: name, Status: api.NodeReady,
				Labels:   map[string]string{api.LabelRack: fmt.Sprintf("r%d", r)},
				Capacity: api.Resources{CPUMilli: 32000, MemoryBytes: 128 << 30, DiskBytes: 1 << 40, NetMbps: 10000}}, Time: c.now})
			for w := 1; w <= 10; w++ {
				a := planAlloc(fmt.Sprintf("a-%s-w%d", name, w), id, 100, false)
				a.Workload, a.NodeName, a.WorkloadVersion = fmt.Sprintf("w%d", w), name, 1
				place = append(place, a)
				running = append(running, &api.AllocUpdate{ID: a.ID, ClientStatus: api.AllocRunning})
			}
		}
	}
	parts, err := fsm.PlanParts(&fsm.ApplyPlan{Place: place, Time: c.now}, fsm.MaxPlanPartBytes, func(string) fsm.StoppedAlloc { return fsm.StoppedAlloc{} })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.p.ProposePlan(parts); err != nil {
		t.Fatal(err)
	}
	c.propose(&fsm.AllocClientUpdate{Updates: running, Time: c.now})
	return c
}

// pass runs the incidents loop's pass at the clock and commits what it
// proposed.
func (c *incidentCell) pass() {
	c.t.Helper()
	for _, cmd := range c.l.correlation.pass() {
		c.propose(cmd)
	}
}

func (c *incidentCell) incidentEvents() []*api.Event {
	var out []*api.Event
	for _, e := range c.f.State().Snapshot().Events(nil, "", "") {
		if e.Type == api.EventIncident {
			out = append(out, e)
		}
	}
	return out
}

// TestIncidentsFromTheCellsEvents: allocations of rack r3 fail; the
// leader's pass makes one incident of rack r3 of their events, records it
// as an event once, links the failures to it, and a new term's replay
// finds it again without recording it twice.
func TestIncidentsFromTheCellsEvents(t *testing.T) {
	c := newIncidentCell(t)
	c.pass() // the term's first pass: the placements, nothing to say
	if got := c.incidentEvents(); len(got) != 0 {
		t.Fatalf("incident events before any trouble: %v", got)
	}
	var fails []*api.AllocUpdate
	for n := 1; n <= 5; n++ {
		for w := 1; w <= 3; w++ {
			fails = append(fails, &api.AllocUpdate{ID: fmt.Sprintf("a-r3-n%d-w%d", n, w), ClientStatus: api.AllocFailed, ClientReason: "task t: exit 1"})
		}
	}
	c.now = c.now.Add(10 * time.Second)
	c.propose(&fsm.AllocClientUpdate{Updates: fails, Time: c.now})
	c.now = c.now.Add(5 * time.Second)
	c.pass()

	incidents := c.l.Incidents("")
	if len(incidents) != 1 || incidents[0].Cause.Key != "rack" || incidents[0].Cause.Value != "r3" {
		t.Fatalf("incidents %+v, want one of rack r3", incidents)
	}
	in := incidents[0]
	if in.Status != api.IncidentOpen || in.Allocations != 15 || in.Nodes != 5 || in.Kinds["failed"] != 15 {
		t.Fatalf("incident %+v", in)
	}
	if want := "15 allocations on 5 nodes of rack r3 failed at once: rack r3"; in.Summary != want {
		t.Fatalf("summary %q, want %q", in.Summary, want)
	}
	events := c.incidentEvents()
	if len(events) != 1 || events[0].Incident != in.ID || !strings.Contains(events[0].Message, "incident "+in.ID+" opened: 15 allocations") {
		t.Fatalf("incident events %+v", events)
	}
	linked := 0
	for _, e := range c.f.State().Snapshot().Events(nil, "", "") {
		if e.Type == api.EventAllocFailed {
			if got := c.l.IncidentOf(e.ID); got != in.ID {
				t.Fatalf("failure event %s links to %q, want %s", e.ID, got, in.ID)
			}
			linked++
		}
	}
	if linked != 15 {
		t.Fatalf("%d failure events, want 15", linked)
	}

	c.now = c.now.Add(5 * time.Second)
	c.pass()
	c.l.correlation.begin() // a new term: the replay re-derives it
	c.pass()
	if again := c.l.Incidents(api.IncidentOpen); len(again) != 1 || again[0].ID != in.ID {
		t.Fatalf("after a new term: %+v, want %s again", again, in.ID)
	}
	if got := c.incidentEvents(); len(got) != 1 {
		t.Fatalf("%d incident events after a new term, want the one", len(got))
	}

	// Quiet for the engine's Quiet: it closes, and says so once.
	c.now = c.now.Add(11 * time.Minute)
	c.pass()
	c.pass()
	events = c.incidentEvents()
	if len(events) != 2 || !strings.Contains(events[1].Message, "incident "+in.ID+" closed (quiet for 10 min)") {
		t.Fatalf("incident events %+v, want opened and closed", events)
	}
	if open := c.l.Incidents(api.IncidentOpen); len(open) != 0 {
		t.Fatalf("open incidents %+v after the quiet", open)
	}
}

// TestIncidentsFromRestartsAndLosses: restarts and losses have no events
// of their own; the pass reads them from the allocations.
func TestIncidentsFromRestartsAndLosses(t *testing.T) {
	c := newIncidentCell(t)
	c.pass()
	var ups []*api.AllocUpdate
	for w := 1; w <= 6; w++ {
		ups = append(ups, &api.AllocUpdate{ID: fmt.Sprintf("a-r2-n4-w%d", w), ClientStatus: api.AllocRunning,
			TaskStates: map[string]*api.TaskState{"t": {State: "running", Restarts: 2, StartedAt: c.now.Add(3 * time.Second)}}})
	}
	c.now = c.now.Add(5 * time.Second)
	c.propose(&fsm.AllocClientUpdate{Updates: ups, Time: c.now})
	c.pass()
	incidents := c.l.Incidents("")
	if len(incidents) != 1 || incidents[0].Summary != "6 allocations on node r2-n4 restarted at once: node r2-n4" {
		t.Fatalf("incidents %+v, want node r2-n4's restarts", incidents)
	}
}
