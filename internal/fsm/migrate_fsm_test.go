package fsm

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

// migrationCell is baseCell with a second node, n2, that can take a1.
func migrationCell(r *fsmRig) {
	baseCell(r)
	r.must(&UpsertNode{Node: fsmNode("n2"), Time: fsmTime})
}

func moveOf(id string) *api.Migration {
	return &api.Migration{ID: id, Kind: api.MigrationMove, SourceNode: "n1", TargetNode: "n2", TargetNodeName: "node-n2",
		TargetAssignment: api.Assignment{NUMANode: -1}, Token: "secret", RequestedAt: fsmTime}
}

func migrateStep(op, id string) *Migrate {
	return &Migrate{AllocID: "a1", Op: op, MigrationID: id, Reason: op + " reason", Time: fsmTime}
}

func begin(m *api.Migration) *Migrate {
	return &Migrate{AllocID: "a1", Op: MigrationOpBegin, Migration: m, Time: fsmTime}
}

// TestFSMMigrationSteps: each step applies only to the migration it names
// in the state it expects; commit and abort exclude each other, and a
// commit moves the allocation and its resources in the same entry.
func TestFSMMigrationSteps(t *testing.T) {
	checkpoint := &api.Migration{ID: "c1", Kind: api.MigrationCheckpoint, SourceNode: "n1", RequestedAt: fsmTime}
	cases := []struct {
		name    string
		steps   []*Migrate
		applied []bool // per step
		node    string // where a1 is at the end
		outcome string
	}{
		{"commit moves", []*Migrate{begin(moveOf("m1")), migrateStep(api.MigrationOpCommit, "m1")},
			[]bool{true, true}, "n2", api.MigrationCommitted},
		{"abort stays", []*Migrate{begin(moveOf("m1")), migrateStep(api.MigrationOpAbort, "m1")},
			[]bool{true, true}, "n1", api.MigrationAborted},
		{"commit after abort loses", []*Migrate{begin(moveOf("m1")), migrateStep(api.MigrationOpAbort, "m1"), migrateStep(api.MigrationOpCommit, "m1")},
			[]bool{true, true, false}, "n1", api.MigrationAborted},
		{"abort after commit loses", []*Migrate{begin(moveOf("m1")), migrateStep(api.MigrationOpCommit, "m1"), migrateStep(api.MigrationOpAbort, "m1")},
			[]bool{true, true, false}, "n2", api.MigrationCommitted},
		{"one in flight at a time", []*Migrate{begin(moveOf("m1")), begin(moveOf("m2")), migrateStep(api.MigrationOpCommit, "m2")},
			[]bool{true, false, false}, "n1", ""},
		{"another migration's commit", []*Migrate{begin(moveOf("m1")), migrateStep(api.MigrationOpCommit, "zz")},
			[]bool{true, false}, "n1", ""},
		{"a checkpoint is not committed", []*Migrate{begin(checkpoint), migrateStep(api.MigrationOpCommit, "c1"), migrateStep(api.MigrationOpDone, "c1")},
			[]bool{true, false, true}, "n1", api.MigrationFailed},
		{"report only after the end", []*Migrate{begin(moveOf("m1")), migrateStep(api.MigrationOpReport, "m1"), migrateStep(api.MigrationOpAbort, "m1"), migrateStep(api.MigrationOpReport, "m1")},
			[]bool{true, false, true, true}, "n1", api.MigrationAborted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newFSMRig(t)
			migrationCell(r)
			for i, step := range tc.steps {
				ans, ok := r.apply(step).(Migrated)
				if !ok {
					t.Fatalf("step %d (%s): answer is not a Migrated", i, step.Op)
				}
				if ans.Applied != tc.applied[i] {
					t.Errorf("step %d (%s %s): applied %v, want %v (%s)", i, step.Op, step.MigrationID, ans.Applied, tc.applied[i], ans.Reason)
				}
			}
			a := r.snap().Alloc("a1")
			if a.NodeID != tc.node {
				t.Errorf("a1 on %s, want %s", a.NodeID, tc.node)
			}
			if a.Migration.Outcome != tc.outcome {
				t.Errorf("outcome %q, want %q", a.Migration.Outcome, tc.outcome)
			}
			checkMigrationAccounting(t, r)
		})
	}
}

// TestFSMMigrationCommitOfStoppedAllocAborts: an allocation stopped while
// it migrates is not moved: the commit ends the migration aborted.
func TestFSMMigrationCommitOfStoppedAllocAborts(t *testing.T) {
	r := newFSMRig(t)
	migrationCell(r)
	r.must(begin(moveOf("m1")))
	r.must(&ApplyPlan{Stop: []api.StopRequest{{AllocID: "a1", Reason: "workload stopped"}}, Time: fsmTime})
	ans := r.apply(migrateStep(api.MigrationOpCommit, "m1")).(Migrated)
	if ans.Outcome != api.MigrationAborted {
		t.Fatalf("commit of a stopped allocation: %+v, want aborted", ans)
	}
	if a := r.snap().Alloc("a1"); a.NodeID != "n1" {
		t.Errorf("a stopped allocation moved to %s", a.NodeID)
	}
}

// TestFSMMigrationEvents: begin, commit and abort each leave an event.
func TestFSMMigrationEvents(t *testing.T) {
	r := newFSMRig(t)
	migrationCell(r)
	r.must(begin(moveOf("m1")))
	r.must(migrateStep(api.MigrationOpCommit, "m1"))
	r.must(migrateStep(api.MigrationOpAbort, "m1")) // too late: no event
	var got []string
	for _, e := range r.events() {
		if len(e) > len(api.EventAllocMigration) && e[:len(api.EventAllocMigration)] == api.EventAllocMigration {
			got = append(got, e)
		}
	}
	want := []string{
		"alloc-migration: migration m1 of a1 from node node-n1 to node node-n2 requested",
		"alloc-migration: migration m1 committed: a1 now runs on node node-n2, restored from its checkpoint",
	}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// checkMigrationAccounting: a1's resources are counted once, on the node
// the state says runs it.
func checkMigrationAccounting(t interface {
	Helper()
	Errorf(string, ...any)
}, r *fsmRig) {
	t.Helper()
	a := r.snap().Alloc("a1")
	for _, id := range []string{"n1", "n2"} {
		var want api.Resources
		if id == a.NodeID && !a.Terminal() {
			want = a.Resources
		}
		if got := r.snap().Node(id).Allocated; got != want {
			t.Errorf("node %s allocated %+v, want %+v (a1 on %s)", id, got, want, a.NodeID)
		}
	}
}

// TestFSMMigrationProperty: over any sequence of migration steps (begins,
// commits, aborts, reports with right and wrong ids, interleaved with a
// stop), the first commit or abort of the migration in flight decides it
// and nothing changes it afterwards; the allocation is on the target only
// when committed, and its resources count on exactly its node.
func TestFSMMigrationProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		r := newFSMRig(t)
		migrationCell(r)
		ids := []string{"m1", "m2", "m3"}
		ops := []string{MigrationOpBegin, api.MigrationOpCommit, api.MigrationOpAbort, api.MigrationOpReport, "stop"}
		decided := map[string]string{} // migration id -> its outcome, once decided
		steps := rapid.IntRange(1, 20).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			op := rapid.SampledFrom(ops).Draw(rt, "op")
			id := rapid.SampledFrom(ids).Draw(rt, "id")
			before := r.snap().Alloc("a1")
			switch op {
			case "stop":
				r.must(&ApplyPlan{Stop: []api.StopRequest{{AllocID: "a1", Reason: "stopped"}}, Time: fsmTime})
				continue
			case MigrationOpBegin:
				m := moveOf(id)
				m.SourceNode = before.NodeID
				m.TargetNode, m.TargetNodeName = "n1", "node-n1"
				if before.NodeID == "n1" {
					m.TargetNode, m.TargetNodeName = "n2", "node-n2"
				}
				if decided[id] != "" {
					continue // ids are never reused
				}
				r.apply(&Migrate{AllocID: "a1", Op: op, Migration: m, Time: fsmTime})
			default:
				r.apply(migrateStep(op, id))
			}
			after := r.snap().Alloc("a1")
			m := after.Migration
			if m != nil && m.Outcome != "" {
				if prev, ok := decided[m.ID]; ok && prev != m.Outcome {
					rt.Fatalf("migration %s changed its outcome %s -> %s", m.ID, prev, m.Outcome)
				}
				decided[m.ID] = m.Outcome
			}
			moved := after.NodeID != before.NodeID
			committedNow := m != nil && m.Outcome == api.MigrationCommitted && before.Migration.Active() && before.Migration.ID == m.ID
			if moved != committedNow {
				rt.Fatalf("allocation moved %v but committed now %v (op %s %s)", moved, committedNow, op, id)
			}
			if moved && after.NodeID != before.Migration.TargetNode {
				rt.Fatalf("moved to %s, not the target %s", after.NodeID, before.Migration.TargetNode)
			}
			checkMigrationAccounting(rt, r)
		}
	})
}
