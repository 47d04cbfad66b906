package fsm

import (
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/gc"
)

// TestFSMAutoQuarantineAppliesToTheNodeAsSeen: the leader's automatic
// quarantine carries the node's ModifyIndex as it judged it; when an
// operator's lift (or anything else that changed the node) came first in
// the log, it is dropped, with no event, and the lift is remembered.
func TestFSMAutoQuarantineAppliesToTheNodeAsSeen(t *testing.T) {
	r := newFSMRig(t)
	baseCell(r)
	auto := func(seen uint64) *NodeOp {
		return nodeOp(NodeOpQuarantine, withQuarantine, func(c *NodeOp) {
			c.Quarantine.Auto, c.Quarantine.Reason, c.SeenIndex = true, "allocations fail far more often than the cell's: 9 of 10", seen
		})
	}
	seen := r.snap().Node("n1").ModifyIndex
	r.must(nodeOp(NodeOpDisable)) // the node changes after the leader's view
	before := len(r.events())
	r.must(auto(seen))
	if n := r.snap().Node("n1"); n.Quarantine != nil || len(r.events()) != before {
		t.Fatalf("a stale automatic quarantine applied: %+v, events %q", n.Quarantine, r.events()[before:])
	}
	r.must(auto(r.snap().Node("n1").ModifyIndex))
	n := r.snap().Node("n1")
	if n.Quarantine == nil || !n.Quarantine.Auto || n.Status != api.NodeQuarantined {
		t.Fatalf("automatic quarantine not applied: %s %+v", n.Status, n.Quarantine)
	}
	if ev := r.events()[len(r.events())-1]; !strings.HasPrefix(ev, "node-quarantine: node node-n1 quarantined automatically: allocations fail") {
		t.Fatalf("event %q", ev)
	}
	lift := nodeOp(NodeOpLift)
	r.must(lift)
	if n := r.snap().Node("n1"); n.Quarantine != nil || !n.QuarantineLifted.Equal(lift.Time) {
		t.Fatalf("after the lift: %+v, lifted %v", n.Quarantine, n.QuarantineLifted)
	}
}

// TestFSMCollectGarbage: the garbage command decodes in its own family and
// deletes only what is still finished.
func TestFSMCollectGarbage(t *testing.T) {
	r := newFSMRig(t)
	baseCell(r) // a1 of "low", running
	done := fsmAlloc("a0", "n1", "low", 10)
	done.ClientStatus, done.DesiredStatus = api.AllocComplete, api.DesiredStop
	r.must(&ApplyPlan{Place: []*api.Allocation{done}, Time: fsmTime})
	r.must(&CollectGarbage{Garbage: gc.Garbage{Allocs: []string{"a0", "a1", "gone"}}, Time: fsmTime})
	if r.snap().Alloc("a0") != nil || r.snap().Alloc("a1") == nil {
		t.Fatalf("after collection: a0 %v, a1 %v; want a0 gone and the running a1 kept", r.snap().Alloc("a0") != nil, r.snap().Alloc("a1") != nil)
	}
}
