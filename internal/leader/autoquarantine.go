package leader

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/quarantine"
	"github.com/strata-dev/strata/internal/state"
)

// autoQuarantine quarantines nodes on the leader's own judgement. Every
// QuarantineInterval it reads the nodes and their allocations from the
// state, asks internal/quarantine (a pure function of what it read and the
// time) which nodes fail far more often than the cell or flap, and
// proposes for each the operator's quarantine command (nodeops.go) with
// Auto set and the evidence as its reason: the node takes no new work and
// is drained under its groups' disruption budgets, until an operator lifts
// it. Everything it reads is in the replicated state (allocations'
// outcomes, Node.Downs, Node.QuarantineLifted), so a new leader judges as
// the old one did.
type autoQuarantine struct {
	l *Leader

	mu sync.Mutex
	// heldBack is how many nodes the cap held back at the last check.
	heldBack int
	// said is what the last check logged about held-back nodes and
	// cell-wide flapping, so that a steady state is logged once.
	said string
}

// step judges the cell once and proposes what it decided.
func (q *autoQuarantine) step(context.Context) error {
	l := q.l
	if l.cfg.AutoQuarantine.Off {
		return nil
	}
	snap := l.state().Snapshot()
	now := l.cfg.Now()
	dec := quarantine.Decide(quarantineView(snap, now, l.cfg.AutoQuarantine), l.cfg.AutoQuarantine, now)
	var failed []error
	for _, v := range dec.Quarantine {
		n := snap.Node(v.NodeID)
		if n == nil {
			continue
		}
		cmd := l.make.NodeOp(snap, &fsm.NodeOp{Op: fsm.NodeOpQuarantine, NodeID: n.ID, Time: now, SeenIndex: n.ModifyIndex,
			Quarantine: &api.Quarantine{Reason: v.Reason, Since: now, Auto: true},
			Drain:      &api.DrainSpec{StartedAt: now, Deadline: now.Add(api.DefaultDrainDeadline)}})
		if _, err := l.propose(cmd); err != nil {
			failed = append(failed, fmt.Errorf("quarantine node %s: %w", n.ID, err))
			continue
		}
		l.metrics.autoQuarantines.Inc()
		l.logger.Warn("node quarantined automatically", "node", n.ID, "name", n.Name, "kind", v.Kind, "evidence", v.Reason)
	}
	var said []string
	for _, v := range dec.HeldBack {
		said = append(said, v.Name)
	}
	summary := fmt.Sprintf("%s|%t", strings.Join(said, ","), dec.CellWideFlapping > 0)
	q.mu.Lock()
	q.heldBack = len(dec.HeldBack)
	changed := q.said != summary
	q.said = summary
	q.mu.Unlock()
	if !changed {
		return errors.Join(failed...)
	}
	if len(said) > 0 {
		l.logger.Warn("automatic quarantine: the cap holds nodes back", "nodes", said, "cap", dec.Cap, "quarantined_automatically", dec.Auto)
	}
	if dec.CellWideFlapping > 0 {
		l.logger.Warn("automatic quarantine: too many nodes flap at once to blame them; quarantining none for it", "flapping", dec.CellWideFlapping)
	}
	return errors.Join(failed...)
}

// heldBackNow is how many nodes the cap held back at the last check.
func (q *autoQuarantine) heldBackNow() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.heldBack
}

// quarantineView reads the cell as internal/quarantine weighs it: every
// node, its downs and lift, and its allocations that still run or ended
// within the policy's window. A failure is an allocation its own tasks
// failed: not lost with its node, not fenced by its agent.
func quarantineView(snap *state.Snapshot, now time.Time, p quarantine.Policy) []quarantine.Node {
	start := now.Add(-p.WithDefaults().Window)
	nodes := snap.Nodes()
	out := make([]quarantine.Node, 0, len(nodes))
	for _, n := range nodes {
		qn := quarantine.Node{ID: n.ID, Name: n.Name, Quarantined: n.Quarantine != nil, Auto: n.Quarantine != nil && n.Quarantine.Auto,
			Lifted: n.QuarantineLifted, Downs: n.Downs}
		for _, a := range snap.AllocsByNode(n.ID) {
			alloc := quarantine.Alloc{Workload: fsm.Qualified(a.Namespace, a.Workload)}
			if a.Terminal() {
				if a.ClientStatusTime.IsZero() || a.ClientStatusTime.Before(start) {
					continue // ended before the window (or when, unknown)
				}
				alloc.Ended = a.ClientStatusTime
				alloc.Failed = a.ClientStatus == api.AllocFailed && !strings.Contains(a.ClientReason, api.ReasonFenced)
			}
			qn.Allocs = append(qn.Allocs, alloc)
		}
		out = append(out, qn)
	}
	return out
}

// autoQuarantined counts the nodes quarantined automatically now.
func autoQuarantined(snap *state.Snapshot) int {
	count := 0
	for _, n := range snap.Nodes() {
		if n.Quarantine != nil && n.Quarantine.Auto {
			count++
		}
	}
	return count
}
