package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
)

const migratableWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  groups:
    - name: g
      replicas: %d
      disruption: {maxUnavailable: %d}
      tasks:
        - {name: t, driver: exec, command: ["/bin/counter"], resources: {cpu: 1000m, memory: 64Mi}}
`

// checkpointing makes a fake node one whose agent can checkpoint and
// restore, with an address to send images to.
func checkpointing(n *api.Node) {
	n.Checkpoint = &api.NodeCheckpoint{Available: true, Tool: "criu (fake)", Drivers: []string{"exec"}}
	n.HTTPAddr = "http://127.0.0.1:1"
}

// migrationAgents plays the agents' part of migrations between fake
// agents: each move in flight from one of them is committed by its target
// (restored), or aborted by its source when abort is set.
type migrationAgents struct {
	agents map[string]*fakeAgent
	abort  bool
}

func (m *migrationAgents) settle(ctx context.Context, cl *api.Client, workload string) error {
	allocs, _, err := cl.Allocations(ctx, workload, nil)
	if err != nil {
		return err
	}
	for _, a := range allocs {
		mig := a.Migration
		if !mig.Active() || mig.Kind != api.MigrationMove {
			continue
		}
		req := &api.MigrationOutcomeRequest{MigrationID: mig.ID, Op: api.MigrationOpCommit}
		speaker := m.agents[mig.TargetNode]
		if m.abort {
			req.Op, req.Reason, speaker = api.MigrationOpAbort, "criu dump failed (fake)", m.agents[mig.SourceNode]
		}
		if _, err := speaker.cl.ReportMigration(ctx, a.ID, req); err != nil {
			return fmt.Errorf("report %s of %s: %w", req.Op, a.ID, err)
		}
	}
	return nil
}

// drainWithMigrations drains n1 of a cell of three fake agents (n1 can
// checkpoint; n2 and n3 can restore when othersRestore) running workload
// "svc" with 3 replicas under maxUnavailable 1, the agents settling
// migrations as agents says; it checks the budget at every look (a
// migration in flight is a move in flight) and returns svc's allocations
// before the drain and once it is done.
func drainWithMigrations(t *testing.T, agents *migrationAgents, othersRestore bool) (before, after []*api.Allocation) {
	t.Helper()
	cl, c := drainCell(t)
	ctx := context.Background()
	n1 := newFakeAgentWith(t, c, "n1", 16000, checkpointing)
	if _, err := cl.RegisterWorkload(ctx, []byte(fmt.Sprintf(migratableWorkload, "svc", 3, 1))); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, cl, "svc", 3, n1)
	n2 := newFakeAgentWith(t, c, "n2", 16000, func(n *api.Node) {
		if othersRestore {
			checkpointing(n)
		}
	})
	n3 := newFakeAgentWith(t, c, "n3", 16000, func(n *api.Node) {
		if othersRestore {
			checkpointing(n)
		}
	})
	agents.agents = map[string]*fakeAgent{"n1": n1, "n2": n2, "n3": n3}
	before, _, err := cl.Allocations(ctx, "svc", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.DrainNode(ctx, "n1", &api.DrainRequest{Deadline: "1h"}); err != nil {
		t.Fatal(err)
	}
	servertest.Eventually(t, 60*time.Second, "drain of n1 done", func() error {
		if err := syncAll(n1, n2, n3); err != nil {
			return err
		}
		allocs, _, err := cl.Allocations(ctx, "svc", nil)
		if err != nil {
			return err
		}
		v := viewOf(allocs, "n1")
		for _, a := range allocs {
			if a.Migration.Active() {
				v.moving++
			}
		}
		if v.moving > 1 || v.serving < 2 {
			t.Fatalf("svc: %d replicas moving and %d serving, budget maxUnavailable 1 of 3", v.moving, v.serving)
		}
		if err := agents.settle(ctx, cl, "svc"); err != nil {
			return err
		}
		st, _, err := cl.NodeStatus(ctx, "n1", nil)
		if err != nil {
			return err
		}
		if st.Node.Drain != nil {
			return fmt.Errorf("still draining, %d allocations left", st.Remaining)
		}
		return nil
	})
	waitRunning(t, cl, "svc", 3, n1, n2, n3)
	after, _, err = cl.Allocations(ctx, "svc", nil)
	if err != nil {
		t.Fatal(err)
	}
	return before, after
}

func liveIDs(allocs []*api.Allocation) []string {
	var ids []string
	for _, a := range allocs {
		if a.DesiredStatus == api.DesiredRun && !a.Terminal() {
			ids = append(ids, a.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestDrainMigratesWhatCanCheckpoint: a drain of a node whose allocations
// can migrate moves each of them, the same allocation with its state, to
// another node, one at a time under maxUnavailable 1; none is stopped and
// replaced.
func TestDrainMigratesWhatCanCheckpoint(t *testing.T) {
	t.Parallel()
	before, after := drainWithMigrations(t, &migrationAgents{}, true)
	if got, want := liveIDs(after), liveIDs(before); !slices.Equal(got, want) {
		t.Fatalf("live allocations after the drain %v, want the same as before %v (migrated, not replaced)", got, want)
	}
	for _, a := range after {
		if a.NodeID == "n1" || a.Migration == nil || a.Migration.Outcome != api.MigrationCommitted || a.Migration.SourceNode != "n1" {
			t.Fatalf("allocation %s on %s, migration %+v: want moved off n1 by a committed migration", a.ID, a.NodeID, a.Migration)
		}
	}
}

// TestDrainFallsBackToStopAndReplace: a migration that the agents abort,
// or that no node can take (none other can restore), is tried once; the
// allocation then moves by stop-and-replace.
func TestDrainFallsBackToStopAndReplace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		abort         bool
		othersRestore bool
		wantReason    string
	}{
		{"the agents abort", true, true, "criu dump failed (fake)"},
		{"no node can restore", false, false, "no target node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before, after := drainWithMigrations(t, &migrationAgents{abort: tt.abort}, tt.othersRestore)
			byID := map[string]*api.Allocation{}
			for _, a := range after {
				byID[a.ID] = a
			}
			for _, old := range before {
				a := byID[old.ID]
				if a == nil || a.DesiredStatus != api.DesiredStop || a.NodeID != "n1" {
					t.Fatalf("old allocation %s after the drain: %+v, want stopped on n1", old.ID, a)
				}
				if m := a.Migration; m == nil || m.Outcome != api.MigrationAborted || !strings.Contains(m.Reason, tt.wantReason) {
					t.Fatalf("old allocation %s: migration %+v, want one aborted with %q", a.ID, m, tt.wantReason)
				}
			}
			if live := liveIDs(after); len(live) != 3 || slices.ContainsFunc(live, func(id string) bool { return byID[id].PreviousAlloc == "" }) {
				t.Fatalf("live allocations %v, want 3 replacements", live)
			}
		})
	}
}

const containerdWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: box}
spec:
  groups:
    - name: g
      tasks:
        - {name: t, driver: containerd, image: "oci-archive:/images/box.tar", resources: {cpu: 500m, memory: 64Mi}}
`

// TestMoveTargetKeepsWhatTheSourceKeeps: a container whose node dumps it
// with its memory moves only to a node that restores containers with
// theirs: the scheduler's choice skips a node whose containerd cannot
// (its runc has no criu), and naming that node is refused with the
// reason.
func TestMoveTargetKeepsWhatTheSourceKeeps(t *testing.T) {
	t.Parallel()
	cl, c := drainCell(t)
	ctx := context.Background()
	keeping := func(drivers ...string) func(*api.Node) {
		return func(n *api.Node) {
			checkpointing(n)
			n.Drivers = []string{"containerd", "exec"}
			n.Checkpoint.Drivers = drivers
		}
	}
	n1 := newFakeAgentWith(t, c, "n1", 16000, keeping("containerd", "exec"))
	if _, err := cl.RegisterWorkload(ctx, []byte(containerdWorkload)); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, cl, "box", 1, n1)
	n2 := newFakeAgentWith(t, c, "n2", 64000, keeping("exec"))
	n3 := newFakeAgentWith(t, c, "n3", 1000, keeping("containerd"))
	if err := syncAll(n1, n2, n3); err != nil {
		t.Fatal(err)
	}
	allocs, _, err := cl.Allocations(ctx, "box", nil)
	if err != nil || len(allocs) != 1 {
		t.Fatalf("allocations %v, %v", allocs, err)
	}
	id := allocs[0].ID
	_, err = cl.Migrate(ctx, id, &api.MigrateRequest{Kind: api.MigrationMove, To: "n2"})
	if err == nil || !strings.Contains(err.Error(), "does not restore containerd tasks with their memory") {
		t.Fatalf("move to n2: %v, want refused: n2's containerd does not keep memory", err)
	}
	ans, err := cl.Migrate(ctx, id, &api.MigrateRequest{Kind: api.MigrationMove})
	if err != nil {
		t.Fatalf("move: %v", err)
	}
	if ans.Migration.TargetNode != "n3" {
		t.Fatalf("the scheduler chose %s (the emptier n2 cannot keep the container's memory), want n3", ans.Migration.TargetNode)
	}
}
