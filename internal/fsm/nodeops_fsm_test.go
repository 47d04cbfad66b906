package fsm

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

var (
	fsmDeadline = fsmTime.Add(time.Hour)
	fsmDrain    = &api.DrainSpec{StartedAt: fsmTime, Deadline: fsmDeadline}
)

func nodeOp(op string, mod ...func(c *NodeOp)) *NodeOp {
	c := &NodeOp{Op: op, NodeID: "n1", Time: fsmTime}
	for _, m := range mod {
		m(c)
	}
	return c
}

func withDrain(c *NodeOp) { d := *fsmDrain; c.Drain = &d }
func withQuarantine(c *NodeOp) {
	withDrain(c)
	c.Quarantine = &api.Quarantine{Reason: "ecc errors", Since: fsmTime}
}

// TestFSMNodeOps applies each node operation, after the commands that set
// its scene, to baseCell (node n1 running a1 of workload low), and checks
// the node, its allocations and the events the operation derived.
func TestFSMNodeOps(t *testing.T) {
	down := &NodeStatus{NodeID: "n1", Status: api.NodeDown, Reason: "missed heartbeats", Time: fsmTime}
	tests := []struct {
		name    string
		before  []*NodeOp
		down    bool // n1 is marked down before the operation
		op      *NodeOp
		wantErr error
		events  []string
		status  string // n1's status after; "" means gone
		elig    string
		drain   bool
		check   func(t *testing.T, s *state.Snapshot)
	}{
		{name: "disable cordons", op: nodeOp(NodeOpDisable),
			events: []string{"node-eligibility: node node-n1 ineligible: takes no new work"},
			status: api.NodeReady, elig: api.NodeIneligible},
		{name: "enable uncordons", before: []*NodeOp{nodeOp(NodeOpDisable)}, op: nodeOp(NodeOpEnable),
			events: []string{"node-eligibility: node node-n1 eligible: takes new work"},
			status: api.NodeReady, elig: api.NodeEligible},
		{name: "drain", op: nodeOp(NodeOpDrain, withDrain),
			events: []string{"node-drain: node node-n1 draining 1 allocations by 2026-01-02T04:04:05Z"},
			status: api.NodeDraining, elig: api.NodeIneligible, drain: true,
			check: func(t *testing.T, s *state.Snapshot) {
				if a := s.Alloc("a1"); a.DesiredStatus != api.DesiredRun {
					t.Fatal("a drain stops nothing itself: the scheduler moves allocations")
				}
			}},
		{name: "drain keeping system workloads", op: nodeOp(NodeOpDrain, withDrain, func(c *NodeOp) { c.Drain.KeepSystem = true }),
			events: []string{"node-drain: node node-n1 draining 1 allocations by 2026-01-02T04:04:05Z, keeping system workloads"},
			status: api.NodeDraining, elig: api.NodeIneligible, drain: true},
		{name: "drain done leaves the node ineligible", before: []*NodeOp{nodeOp(NodeOpDrain, withDrain)}, op: nodeOp(NodeOpDrainDone),
			events: []string{"node-drain: node node-n1 drain complete; the node stays ineligible"},
			status: api.NodeReady, elig: api.NodeIneligible},
		{name: "drain done names another drain: nothing ends", before: []*NodeOp{nodeOp(NodeOpDrain, withDrain)},
			op:     nodeOp(NodeOpDrainDone, func(c *NodeOp) { c.Drain = &api.DrainSpec{StartedAt: fsmTime.Add(-time.Hour)} }),
			status: api.NodeDraining, elig: api.NodeIneligible, drain: true},
		{name: "drain done of a node not draining", op: nodeOp(NodeOpDrainDone), status: api.NodeReady},
		{name: "drain done of the drain it names", before: []*NodeOp{nodeOp(NodeOpDrain, withDrain)}, op: nodeOp(NodeOpDrainDone, withDrain),
			events: []string{"node-drain: node node-n1 drain complete; the node stays ineligible"},
			status: api.NodeReady, elig: api.NodeIneligible},
		{name: "drain cancelled", before: []*NodeOp{nodeOp(NodeOpDrain, withDrain)}, op: nodeOp(NodeOpDrainCancel),
			events: []string{"node-drain: node node-n1 drain cancelled; the node stays ineligible"},
			status: api.NodeReady, elig: api.NodeIneligible},
		{name: "quarantine drains", op: nodeOp(NodeOpQuarantine, withQuarantine),
			events: []string{"node-quarantine: node node-n1 quarantined: ecc errors (draining 1 allocations)"},
			status: api.NodeQuarantined, elig: api.NodeIneligible, drain: true,
			check: func(t *testing.T, s *state.Snapshot) {
				if q := s.Node("n1").Quarantine; q == nil || q.Reason != "ecc errors" {
					t.Fatalf("quarantine %+v", q)
				}
			}},
		{name: "a quarantined node whose drain is done stays quarantined",
			before: []*NodeOp{nodeOp(NodeOpQuarantine, withQuarantine)}, op: nodeOp(NodeOpDrainDone),
			events: []string{"node-drain: node node-n1 drain complete; the node stays ineligible"},
			status: api.NodeQuarantined, elig: api.NodeIneligible},
		{name: "lift", before: []*NodeOp{nodeOp(NodeOpQuarantine, withQuarantine)}, op: nodeOp(NodeOpLift),
			events: []string{"node-quarantine: node node-n1 quarantine lifted; eligible again"},
			status: api.NodeReady, elig: api.NodeEligible},
		{name: "purge of a down node loses its allocations", down: true, op: nodeOp(NodeOpPurge, func(c *NodeOp) {
			c.Evals = []*api.Evaluation{fsmEval("e-purge", "low")}
		}),
			events: []string{"node-purged: node node-n1 purged (down); 1 allocations lost"},
			check: func(t *testing.T, s *state.Snapshot) {
				a := s.Alloc("a1")
				if a == nil || a.ClientStatus != api.AllocLost || a.DesiredStatus != api.DesiredStop {
					t.Fatalf("allocation after purge: %+v", a)
				}
				if s.Eval("e-purge") == nil {
					t.Fatal("the purge's evaluation was not stored")
				}
				if _, v := s.TopologyVersion(); v < 2 {
					t.Fatalf("topology version %d: a node removed must move it", v)
				}
			}},
		{name: "purge of a live node is refused", op: nodeOp(NodeOpPurge), wantErr: state.ErrNodeAlive,
			status: api.NodeReady},
		{name: "an unknown node", op: &NodeOp{Op: NodeOpDisable, NodeID: "nope", Time: fsmTime}, wantErr: state.ErrNotFound,
			status: api.NodeReady},
		{name: "an unknown operation", op: nodeOp("reboot"), wantErr: errUnknownForTest, status: api.NodeReady},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFSMRig(t)
			baseCell(r)
			for _, c := range tt.before {
				r.must(c)
			}
			if tt.down {
				r.must(down)
			}
			before := len(r.events())
			answer := r.apply(tt.op)
			err, _ := answer.(error)
			switch {
			case tt.wantErr == errUnknownForTest:
				if err == nil || !strings.Contains(err.Error(), "unknown operation") {
					t.Fatalf("apply: %v, want an unknown operation", err)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("apply: %v, want %v", err, tt.wantErr)
				}
			case err != nil:
				t.Fatalf("apply: %v", err)
			}
			got := r.events()[before:]
			if strings.Join(got, "\n") != strings.Join(tt.events, "\n") {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.events, "\n"))
			}
			n := r.snap().Node("n1")
			switch {
			case tt.status == "" && n != nil:
				t.Fatalf("node still there: %+v", n)
			case tt.status != "" && n == nil:
				t.Fatal("node gone")
			case n != nil:
				if n.Status != tt.status || (tt.elig != "" && n.Eligibility != tt.elig) || (n.Drain != nil) != tt.drain {
					t.Fatalf("node status %s eligibility %s drain %+v, want %s %s drain %v", n.Status, n.Eligibility, n.Drain, tt.status, tt.elig, tt.drain)
				}
			}
			if tt.check != nil {
				tt.check(t, r.snap())
			}
		})
	}
}

var errUnknownForTest = errors.New("unknown operation")

// TestOperatorStateOutlivesAgents: an agent that registers again (after a
// restart) or heartbeats back from down never clears a drain, a cordon or
// a quarantine, and cannot set one itself.
func TestOperatorStateOutlivesAgents(t *testing.T) {
	r := newFSMRig(t)
	baseCell(r)
	r.must(nodeOp(NodeOpQuarantine, withQuarantine))
	again := fsmNode("n1")
	again.Eligibility, again.Quarantine, again.Drain = api.NodeEligible, nil, nil
	r.must(&UpsertNode{Node: again, Time: fsmTime})
	if n := r.snap().Node("n1"); n.Status != api.NodeQuarantined || n.Quarantine == nil || n.Drain == nil || n.Eligibility != api.NodeIneligible {
		t.Fatalf("after re-registration: %s %s %+v %+v", n.Status, n.Eligibility, n.Quarantine, n.Drain)
	}
	r.must(&NodeStatus{NodeID: "n1", Status: api.NodeDown, Reason: "missed heartbeats", Time: fsmTime})
	if n := r.snap().Node("n1"); n.Status != api.NodeDown {
		t.Fatalf("status %s, want down", n.Status)
	}
	r.must(&NodeStatus{NodeID: "n1", Status: api.NodeReady, Reason: "heartbeat resumed", Time: fsmTime})
	if n := r.snap().Node("n1"); n.Status != api.NodeQuarantined {
		t.Fatalf("back from down: %s, want quarantined", n.Status)
	}
	fresh := fsmNode("n2")
	fresh.Eligibility, fresh.Drain = api.NodeIneligible, fsmDrain
	r.must(&UpsertNode{Node: fresh, Time: fsmTime})
	if n := r.snap().Node("n2"); n.Status != api.NodeReady || n.Eligibility != "" || n.Drain != nil {
		t.Fatalf("an agent set its own operator state: %s %s %+v", n.Status, n.Eligibility, n.Drain)
	}
}

// TestPurgedWorkloadAllocationsAreCollected: the terminal allocations of a
// purged workload leave the store with it, and those still running leave
// once they stop; a workload of the same name registered again starts
// clean.
func TestPurgedWorkloadAllocationsAreCollected(t *testing.T) {
	r := newFSMRig(t)
	baseCell(r) // a1 of "low", running
	done := fsmAlloc("a0", "n1", "low", 10)
	done.ClientStatus, done.DesiredStatus = api.AllocComplete, api.DesiredStop
	r.must(&ApplyPlan{Place: []*api.Allocation{done}, Time: fsmTime})
	r.must(&StopWorkload{Name: "low", Purge: true, Eval: fsmEval("e-stop", "low"), Time: fsmTime})
	if r.snap().Alloc("a0") != nil {
		t.Fatal("a terminal allocation of a purged workload is still stored")
	}
	if r.snap().Alloc("a1") == nil {
		t.Fatal("a running allocation was collected before its agent stopped it")
	}
	r.must(&UpsertWorkload{Workload: fsmWorkload("low", 10), Eval: fsmEval("e-again", "low")})
	if got := r.snap().Current(r.snap().AllocsByWorkload("", "low")); len(got) != 0 {
		t.Fatalf("the new workload lists %d allocations of its purged predecessor", len(got))
	}
	r.must(&ApplyPlan{Stop: []api.StopRequest{{AllocID: "a1", Reason: "workload purged"}}, Time: fsmTime})
	r.must(&AllocClientUpdate{Updates: []*api.AllocUpdate{{ID: "a1", ClientStatus: api.AllocComplete}}, Time: fsmTime})
	if r.snap().Alloc("a1") != nil {
		t.Fatal("the purged workload's allocation is still stored after it stopped")
	}
	if got := r.snap().Node("n1").Allocated.CPUMilli; got != 0 {
		t.Fatalf("node accounting %d after collection, want 0", got)
	}
}
