package server

import (
	"context"
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
	srv *Server

	mu sync.Mutex
	// heldBack is how many nodes the cap held back at the last check.
	heldBack int
	// said is what the last check logged about held-back nodes and
	// cell-wide flapping, so that a steady state is logged once.
	said string
}

func (q *autoQuarantine) run(ctx context.Context) {
	tick := time.NewTicker(q.srv.cfg.QuarantineInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		q.step()
	}
}

// step judges the cell once and proposes what it decided.
func (q *autoQuarantine) step() {
	s := q.srv
	if s.cfg.AutoQuarantine.Off {
		return
	}
	snap := s.State().Snapshot()
	now := s.cfg.Now()
	dec := quarantine.Decide(quarantineView(snap, now, s.cfg.AutoQuarantine), s.cfg.AutoQuarantine, now)
	for _, v := range dec.Quarantine {
		n := snap.Node(v.NodeID)
		if n == nil {
			continue
		}
		cmd := &fsm.NodeOp{Op: fsm.NodeOpQuarantine, NodeID: n.ID, Time: now, SeenIndex: n.ModifyIndex,
			Quarantine: &api.Quarantine{Reason: v.Reason, Since: now, Auto: true},
			Drain:      &api.DrainSpec{StartedAt: now, Deadline: now.Add(api.DefaultDrainDeadline)},
			Evals:      s.evalsForNode(snap.AllocsByNode(n.ID), api.TriggerNodeDrain, n.ID)}
		if _, err := s.propose(cmd); err != nil {
			s.logger.Warn("automatic quarantine; will retry", "node", n.ID, "err", err)
			continue
		}
		s.metrics.autoQuarantines.Inc()
		s.logger.Warn("node quarantined automatically", "node", n.ID, "name", n.Name, "kind", v.Kind, "evidence", v.Reason)
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
		return
	}
	if len(said) > 0 {
		s.logger.Warn("automatic quarantine: the cap holds nodes back", "nodes", said, "cap", dec.Cap, "quarantined_automatically", dec.Auto)
	}
	if dec.CellWideFlapping > 0 {
		s.logger.Warn("automatic quarantine: too many nodes flap at once to blame them; quarantining none for it", "flapping", dec.CellWideFlapping)
	}
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
