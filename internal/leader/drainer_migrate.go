package leader

import (
	"fmt"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/disruption"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/state"
)

// Drains move what they can with its state. The scheduler's mover leaves
// the allocations a drain can migrate (scheduler.DrainMigrates) to the
// drainer, which begins their migrations here, within each group's
// disruption budget; the mover counts a migration in flight as a move in
// flight, so the two share the budget. A migration that cannot begin (no
// node can take the image) is recorded as an aborted attempt, like one the
// agents abort; either way the allocation falls back to stop-and-replace:
// the drainer asks the scheduler to look again, once per attempt.

// migrations begins the migrations of allocations left on draining node n
// that the drain moves with their state, as far as budgets allows
// (budgets is shared by the nodes of one step: its entries are what each
// group may still start), and asks for an evaluation of the workloads
// whose migration failed, so that they move by stop-and-replace.
func (d *drainer) migrations(snap *state.Snapshot, n *api.Node, left []*api.Allocation, budgets map[groupKey]int) error {
	l := d.l
	var fellBack []*api.Allocation
	for _, a := range left {
		if scheduler.MigrationTriedInDrain(a, n.Drain) {
			if d.firstFallback(a.Migration.ID) {
				fellBack = append(fellBack, a)
			}
			continue
		}
		if !n.Alive() || a.Migration.Active() || !scheduler.DrainMigrates(a, n, n.Drain) {
			continue
		}
		key := groupKey{a.Namespace, a.Workload, a.Group}
		allowed, ok := budgets[key]
		if !ok {
			allowed = disruption.Allowed(groupBudget(snap, a))
		}
		if allowed <= 0 {
			budgets[key] = 0
			continue
		}
		m, err := l.PlanMigration(snap, a, api.MigrateRequest{Kind: api.MigrationMove})
		if err != nil {
			// No migration: an attempt that ended at once, so that the
			// scheduler moves a by stop-and-replace.
			now := l.cfg.Now()
			m = &api.Migration{ID: l.make.NewID(), Kind: api.MigrationMove, SourceNode: n.ID, RequestedAt: now, EndedAt: now,
				Outcome: api.MigrationAborted, Reason: "drain of node " + n.Name + ": " + err.Error(), TargetAssignment: api.Assignment{NUMANode: -1}}
		}
		_, answer, err := l.proposer.Propose(&fsm.Migrate{AllocID: a.ID, Op: fsm.MigrationOpBegin, Migration: m, Time: m.RequestedAt})
		if err != nil {
			l.logger.Warn("drain: begin migration; will retry", "node", n.ID, "alloc", a.ID, "err", err)
			continue
		}
		if ans, _ := answer.(fsm.Migrated); ans.Applied && m.Active() {
			allowed--
			l.logger.Info("drain: migrating", "node", n.ID, "alloc", a.ID, "migration", m.ID, "to", m.TargetNodeName)
		}
		budgets[key] = allowed
	}
	if len(fellBack) == 0 {
		return nil
	}
	if _, err := l.propose(l.make.DrainMoves(fellBack, n.ID)); err != nil {
		d.mu.Lock()
		for _, a := range fellBack {
			delete(d.fellBack, a.Migration.ID)
		}
		d.mu.Unlock()
		return fmt.Errorf("evaluations after failed migrations off node %s: %w", n.ID, err)
	}
	return nil
}

// firstFallback reports whether the failed migration id is seen for the
// first time (by this leader), and remembers it.
func (d *drainer) firstFallback(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fellBack[id] {
		return false
	}
	d.fellBack[id] = true
	return true
}

// groupKey names one group of one workload.
type groupKey struct{ ns, workload, group string }

// groupBudget is a's group as the disruption rule sees it, counted
// conservatively from the store (the mover counts the same from its
// slots): replicas served by a running allocation, and moves under way —
// migrations in flight, live allocations with a live replacement, and
// allocations told to stop that have not stopped while no live allocation
// holds their replica.
func groupBudget(snap *state.Snapshot, a *api.Allocation) disruption.Group {
	g := disruption.Group{MaxUnavailable: disruption.MaxUnavailable(a.TaskGroup), Desired: a.TaskGroup.Replicas}
	if wl := snap.Workload(a.Namespace, a.Workload); wl != nil {
		for _, tg := range wl.Groups {
			if tg.Name == a.Group {
				g.Desired, g.MaxUnavailable = tg.Replicas, disruption.MaxUnavailable(tg)
			}
		}
	}
	var group []*api.Allocation
	for _, b := range snap.AllocsByWorkload(a.Namespace, a.Workload) {
		if b.Group == a.Group {
			group = append(group, b)
		}
	}
	live := func(b *api.Allocation) bool { return b.DesiredStatus == api.DesiredRun && !b.Terminal() }
	served, held, replaced := map[int]bool{}, map[int]bool{}, map[string]bool{}
	for _, b := range group {
		if disruption.Serving(b) {
			served[b.Index] = true
		}
		if live(b) {
			held[b.Index] = true
			if b.PreviousAlloc != "" {
				replaced[b.PreviousAlloc] = true
			}
		}
	}
	g.Serving = len(served)
	for _, b := range group {
		switch {
		case live(b) && (b.Migration.Active() || replaced[b.ID]):
			g.Moving++
		case b.DesiredStatus == api.DesiredStop && !b.Terminal() && !held[b.Index]:
			g.Moving++
		}
	}
	return g
}
