package state

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
)

// ErrNotFound is returned by a write that names an object the store lacks.
var ErrNotFound = errors.New("not found")

// ErrNegativeResources refuses an allocation that asks for less than
// nothing in some dimension: charging it would lower its node's
// accounting (invariant 6). The API edge never lets one through.
var ErrNegativeResources = errors.New("negative resources")

// ErrAccountingOverflow refuses an allocation write after which a node's
// Allocated would no longer fit an int64. Quantities are bounded at the
// API edge, so only a bug or a hand-made command can meet it; the write is
// refused whole rather than wrapping.
var ErrAccountingOverflow = errors.New("node accounting overflow")

// WriteTxn is one atomic write at one raft index. Either every change of a
// command is committed or none is (invariant 6: nothing partial is written).
type WriteTxn struct {
	txn     *memdb.Txn
	index   uint64
	touched map[string]bool
	events  int // events added so far in this transaction
}

// Write runs fn in a write transaction stamped with the raft index and
// commits it if fn returns nil.
func (s *Store) Write(index uint64, fn func(w *WriteTxn) error) error {
	w := &WriteTxn{txn: s.db.Txn(true), index: index, touched: map[string]bool{}}
	defer w.txn.Abort()
	if err := fn(w); err != nil {
		return err
	}
	for table := range w.touched {
		if err := setIndex(w.txn, table, index); err != nil {
			return fmt.Errorf("set index of %s: %w", table, err)
		}
	}
	w.txn.Commit()
	return nil
}

// Snapshot returns a read view of the transaction's uncommitted state.
func (w *WriteTxn) Snapshot() *Snapshot { return &Snapshot{txn: w.txn} }

func (w *WriteTxn) insert(table string, obj interface{}) error {
	w.touched[table] = true
	if err := w.txn.Insert(table, obj); err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	return nil
}

// NextWorkloadVersion is the version UpsertWorkload gives a submission of
// a workload whose stored record is old (nil: none yet).
func NextWorkloadVersion(old *api.Workload) uint64 {
	if old == nil {
		return 1
	}
	return old.Version + 1
}

// UpsertWorkload stores w (a fresh object owned by the store from now on).
func (w *WriteTxn) UpsertWorkload(wl *api.Workload) error {
	wl.Namespace = api.NamespaceOf(wl.Namespace)
	if wl.Namespace != api.DefaultNamespace && w.Snapshot().Namespace(wl.Namespace) == nil {
		return fmt.Errorf("workload %q: namespace %q: %w", wl.Name, wl.Namespace, ErrNamespaceMissing)
	}
	old := w.Snapshot().Workload(wl.Namespace, wl.Name)
	// Versions are assigned here, in log order, so two concurrent
	// submissions never share one.
	wl.Version = NextWorkloadVersion(old)
	if old != nil {
		wl.CreateIndex = old.CreateIndex
	} else {
		wl.CreateIndex = w.index
	}
	wl.ModifyIndex = w.index
	if err := w.retally(old, wl); err != nil {
		return err
	}
	return w.insert(tableWorkloads, wl)
}

// StopWorkload marks a workload stopped, keeping its version.
func (w *WriteTxn) StopWorkload(ns, name string) error {
	old := w.Snapshot().Workload(ns, name)
	if old == nil {
		return fmt.Errorf("workload %q in namespace %q: %w", name, api.NamespaceOf(ns), ErrNotFound)
	}
	wl := *old
	wl.Stopped, wl.ModifyIndex = true, w.index
	if err := w.retally(old, &wl); err != nil {
		return err
	}
	return w.insert(tableWorkloads, &wl)
}

// DeleteWorkload removes the workload (purge). Its terminal allocations and
// finished evaluations go with it; the scheduler stops what still runs,
// and those go as they end (orphans.go, gc.go).
func (w *WriteTxn) DeleteWorkload(ns, name string) error {
	old := w.Snapshot().Workload(ns, name)
	if old == nil {
		return fmt.Errorf("workload %q in namespace %q: %w", name, api.NamespaceOf(ns), ErrNotFound)
	}
	w.touched[tableWorkloads] = true
	if err := w.deleteDeploymentsAndVersions(ns, name); err != nil {
		return err
	}
	if err := w.txn.Delete(tableWorkloads, old); err != nil {
		return err
	}
	if err := w.retally(old, nil); err != nil {
		return err
	}
	if err := w.collectWorkloadEvals(ns, name); err != nil {
		return err
	}
	return w.collectWorkload(ns, name)
}

// UpsertEval stores an evaluation.
func (w *WriteTxn) UpsertEval(e *api.Evaluation) error {
	e.Namespace = api.NamespaceOf(e.Namespace)
	if old := w.Snapshot().Eval(e.ID); old != nil {
		e.CreateIndex = old.CreateIndex
	} else {
		e.CreateIndex = w.index
	}
	e.ModifyIndex = w.index
	return w.insert(tableEvals, e)
}

// UpsertNode stores a node as its agent registered it, keeping the
// server-owned fields (Allocated, CreateIndex) of an existing record.
func (w *WriteTxn) UpsertNode(n *api.Node) error {
	old := w.Snapshot().Node(n.ID)
	if old != nil {
		n.Allocated = old.Allocated
		n.CreateIndex = old.CreateIndex
		n.Eligibility, n.Drain, n.Quarantine = old.Eligibility, old.Drain, old.Quarantine
		n.QuarantineLifted, n.Downs = old.QuarantineLifted, old.Downs
	} else {
		n.Allocated = api.Resources{}
		n.CreateIndex = w.index
		n.Eligibility, n.Drain, n.Quarantine = "", nil, nil
		n.QuarantineLifted, n.Downs = time.Time{}, nil
	}
	if n.Status == api.NodeReady {
		n.Status = n.LiveStatus() // a drain or quarantine outlives the agent's restart
	}
	n.ModifyIndex = w.index
	if err := w.noteTopology(old, n); err != nil {
		return err
	}
	return w.insert(tableNodes, n)
}

// UpdateNodeStatus changes a node's status.
func (w *WriteTxn) UpdateNodeStatus(id, status, reason string) error {
	old := w.Snapshot().Node(id)
	if old == nil {
		return fmt.Errorf("node %q: %w", id, ErrNotFound)
	}
	n := old.Copy()
	n.Status, n.StatusReason, n.ModifyIndex = status, reason, w.index
	if status == api.NodeReady {
		n.Status = n.LiveStatus() // back from down, still draining or quarantined
	}
	return w.insert(tableNodes, n)
}

// UpsertAlloc stores an allocation and moves its resources between the old
// and new record's node accounting.
func (w *WriteTxn) UpsertAlloc(a *api.Allocation) error {
	a.Namespace = api.NamespaceOf(a.Namespace)
	old := w.Snapshot().Alloc(a.ID)
	if old != nil {
		a.CreateIndex = old.CreateIndex
	} else {
		a.CreateIndex = w.index
	}
	a.ModifyIndex = w.index
	// Only a new charge is checked: an allocation stored before the check
	// existed must still be stoppable.
	if dim := a.Resources.Negative(); dim != "" && (old == nil || old.Resources != a.Resources) {
		return fmt.Errorf("allocation %q asks for a negative %s: %w", a.ID, dim, ErrNegativeResources)
	}
	if err := w.account(old, a); err != nil {
		return err
	}
	return w.insert(tableAllocs, a)
}

// account keeps Node.Allocated equal to the sum of the node's non-terminal
// allocations, and each namespace's usage equal to the sum over its
// allocations that count against a quota (api.CountsAgainstQuota), by
// applying the difference one allocation write makes.
func (w *WriteTxn) account(old, updated *api.Allocation) error {
	switch counted, counts := api.CountsAgainstQuota(old), api.CountsAgainstQuota(updated); {
	case counted && !counts:
		if err := w.addToNamespace(old.Namespace, api.QuotaUsage{}.Sub(api.UsageOf(old.Resources))); err != nil {
			return err
		}
	case counts && !counted:
		if err := w.addToNamespace(updated.Namespace, api.UsageOf(updated.Resources)); err != nil {
			return err
		}
	}
	holds := func(a *api.Allocation) bool { return a != nil && !a.Terminal() }
	if holds(old) == holds(updated) && (old == nil || old.NodeID == updated.NodeID) {
		return nil
	}
	if holds(old) {
		if err := w.addToNode(old.NodeID, negate(old.Resources)); err != nil {
			return err
		}
	}
	if holds(updated) {
		if err := w.addToNode(updated.NodeID, updated.Resources); err != nil {
			return err
		}
	}
	return nil
}

// negate is -r; r is never negative (UpsertAlloc refuses it), so no
// dimension is math.MinInt64 and the negation is exact.
func negate(r api.Resources) api.Resources { return api.Resources{}.Sub(r) }

func (w *WriteTxn) addToNode(nodeID string, delta api.Resources) error {
	old := w.Snapshot().Node(nodeID)
	if old == nil {
		return nil // the node was never registered or is gone; nothing to account
	}
	n := old.Copy()
	sum, ok := n.Allocated.AddChecked(delta)
	if !ok {
		return fmt.Errorf("node %q: allocated %+v plus %+v: %w", nodeID, n.Allocated, delta, ErrAccountingOverflow)
	}
	n.Allocated = sum
	n.ModifyIndex = w.index
	return w.insert(tableNodes, n)
}

// StopAlloc sets an allocation's desired status to stop; lost also marks its
// client status lost (its node is gone, nobody will report for it).
func (w *WriteTxn) StopAlloc(id, reason string, lost bool) error {
	return w.StopAllocRequest(api.StopRequest{AllocID: id, Reason: reason, Lost: lost})
}

// StopAllocRequest applies one stop of a plan: desired stop, lost when the
// node is gone, and the preemptor when a higher-priority placement evicts it.
func (w *WriteTxn) StopAllocRequest(s api.StopRequest) error {
	id, reason, lost := s.AllocID, s.Reason, s.Lost
	old := w.Snapshot().Alloc(id)
	if old == nil {
		return fmt.Errorf("allocation %q: %w", id, ErrNotFound)
	}
	a := old.Copy()
	a.DesiredStatus, a.DesiredReason = api.DesiredStop, reason
	if s.PreemptedBy != "" {
		a.PreemptedBy = s.PreemptedBy
	}
	if lost && !old.Terminal() {
		a.ClientStatus, a.ClientReason = api.AllocLost, reason
	}
	return w.UpsertAlloc(a)
}

// UpdateAllocFromClient applies an agent's report. A report for an unknown
// allocation is ignored (it may have been collected).
func (w *WriteTxn) UpdateAllocFromClient(u *api.AllocUpdate) error {
	return w.UpdateAllocFromClientAt(u, time.Time{})
}

// UpdateAllocFromClientAt is UpdateAllocFromClient that stamps at (the
// proposer's time) as ClientStatusTime when the client status changes.
func (w *WriteTxn) UpdateAllocFromClientAt(u *api.AllocUpdate, at time.Time) error {
	old := w.Snapshot().Alloc(u.ID)
	if old == nil {
		return nil
	}
	if old.ClientStatus == api.AllocLost {
		return nil // the server already gave up on it and replaced it
	}
	if IllegalClientTransition(old.ClientStatus, u.ClientStatus) != "" {
		return nil // finished is final: the proposer refused it already
	}
	a := old.Copy()
	if u.ClientStatus != old.ClientStatus && !at.IsZero() {
		a.ClientStatusTime = at
	}
	a.ClientStatus, a.ClientReason = u.ClientStatus, u.ClientReason
	if u.TaskStates != nil {
		a.TaskStates = u.TaskStates
	}
	// A report without health (a finished allocation's) clears it: the
	// last health of a stopped allocation would only mislead.
	a.Health = u.Health
	return w.UpsertAlloc(a)
}

// SetCellConfig replaces the cell configuration (a fresh object owned by
// the store from now on).
func (w *WriteTxn) SetCellConfig(c *api.CellConfig) error {
	c.ModifyIndex = w.index
	return w.insert(tableConfig, &configRow{ID: cellConfigID, Config: c})
}

// SetCellID records the cell's identity once: a cell that has one keeps it
// (the first proposal wins, so two leaders racing at bootstrap agree).
func (w *WriteTxn) SetCellID(id string) error {
	if id == "" {
		return fmt.Errorf("set cell id: empty id")
	}
	if w.Snapshot().CellID() != "" {
		return nil
	}
	return w.insert(tableConfig, &configRow{ID: cellIdentityID, CellID: id})
}

// IllegalClientTransition says why an agent may not move an allocation's
// client status from old to next ("" when it may): a finished allocation
// (complete, failed, lost) never runs again. Its resources were given back
// when it finished and its replacement may hold them; running it again
// would count them twice or run the work twice.
func IllegalClientTransition(old, next string) string {
	switch old {
	case api.AllocComplete, api.AllocFailed, api.AllocLost:
		if next == api.AllocPending || next == api.AllocRunning {
			return fmt.Sprintf("allocation is %s; a finished allocation cannot become %s again", old, next)
		}
		if next != old && old == api.AllocLost {
			return "allocation is lost; the server replaced it"
		}
	}
	return ""
}
