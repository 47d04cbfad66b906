package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
)

// Bounds on what the cell holds (docs/limits.md; issue 18, defect 2).
// 10^5 one-replica workloads took 2.8 GB of a server's memory and 684 MB
// of its data dir with no limit on their number, so the cell counts, per
// namespace and in all, the workloads it stores and the replicas its
// running workloads want: incrementally, by the same writes that store a
// workload (like a namespace's usage), never by scanning. A registration
// that would take a count past its bound is refused by the FSM itself
// (CheckWorkloadLimits), with the bounds the leader stamped on the entry:
// concurrent submissions cannot slip past one another, and every server
// applies the entry the same way whatever its own defaults.

// WorkloadLimits are the bounds a registration is held to; 0 bounds
// nothing (an entry from before bounds existed carries none), a negative
// one allows none (a namespace's quota of 0).
type WorkloadLimits struct {
	CellWorkloads      int64 `json:"cellWorkloads,omitempty"`
	CellReplicas       int64 `json:"cellReplicas,omitempty"`
	NamespaceWorkloads int64 `json:"namespaceWorkloads,omitempty"`
	NamespaceReplicas  int64 `json:"namespaceReplicas,omitempty"`
}

// LimitError refuses a registration that would take the cell or its
// namespace past a bound: Field is the part of the workload that does,
// Msg says which bound and how to raise it.
type LimitError struct {
	Field, Msg string
}

func (e *LimitError) Error() string { return e.Field + ": " + e.Msg }

// The counters' keys (tableCounters): the cell's, and a namespace's with
// the namespace after the slash.
const (
	workloadCountKey = "workloads"
	replicaCountKey  = "replicas"
)

// tallyOf is what a stored workload counts: one workload, and its
// groups' replicas while it runs (a stopped one wants none).
func tallyOf(wl *api.Workload) (workloads, replicas int64) {
	if wl == nil {
		return 0, 0
	}
	if !wl.Stopped {
		for _, g := range wl.Groups {
			replicas += int64(max(g.Replicas, 0))
		}
	}
	return 1, replicas
}

// retally moves the counts from what old counted to what cur counts (nil:
// none), in cur's (or old's) namespace and the cell.
func (w *WriteTxn) retally(old, cur *api.Workload) error {
	ow, or := tallyOf(old)
	cw, cr := tallyOf(cur)
	ns := ""
	if cur != nil {
		ns = cur.Namespace
	} else if old != nil {
		ns = old.Namespace
	}
	ns = api.NamespaceOf(ns)
	for key, delta := range map[string]int64{
		workloadCountKey: cw - ow, workloadCountKey + "/" + ns: cw - ow,
		replicaCountKey: cr - or, replicaCountKey + "/" + ns: cr - or,
	} {
		if delta == 0 {
			continue
		}
		v := int64(w.counter(key)) + delta
		if err := w.txn.Insert(tableCounters, &indexEntry{Table: key, Value: uint64(max(v, 0))}); err != nil {
			return fmt.Errorf("count %s: %w", key, err)
		}
	}
	return nil
}

// WorkloadTally is what namespace ns holds ("": the whole cell): its
// stored workloads, and the replicas its running workloads want.
func (s *Snapshot) WorkloadTally(ns string) (workloads, replicas int64) {
	wk, rk := workloadCountKey, replicaCountKey
	if ns != "" {
		wk, rk = wk+"/"+ns, rk+"/"+ns
	}
	return int64(s.counter(wk)), int64(s.counter(rk))
}

func (s *Snapshot) counter(key string) uint64 {
	obj, err := s.txn.First(tableCounters, "id", key)
	if err != nil || obj == nil {
		return 0
	}
	return obj.(*indexEntry).Value
}

// CheckWorkloadLimits says whether storing wl in place of the stored
// version keeps the cell and wl's namespace within l: nil, or a
// *LimitError. A count that does not grow is never refused, so a cell
// over a bound lowered since can still update and shrink its workloads.
func (s *Snapshot) CheckWorkloadLimits(wl *api.Workload, l WorkloadLimits) error {
	ns := api.NamespaceOf(wl.Namespace)
	ow, or := tallyOf(s.Workload(ns, wl.Name))
	cw, cr := tallyOf(wl)
	dw, dr := cw-ow, cr-or
	field := "spec.groups"
	if len(wl.Groups) == 1 {
		field = "spec.groups[0].replicas"
	}
	cellW, cellR := s.WorkloadTally("")
	nsW, nsR := s.WorkloadTally(ns)
	for _, b := range []struct {
		limit, held, delta int64
		field, what, where string
	}{
		{l.NamespaceWorkloads, nsW, dw, "metadata.name", "workloads", fmt.Sprintf("namespace %q", ns)},
		{l.CellWorkloads, cellW, dw, "metadata.name", "workloads", "the cell"},
		{l.NamespaceReplicas, nsR, dr, field, "replicas of running workloads", fmt.Sprintf("namespace %q", ns)},
		{l.CellReplicas, cellR, dr, field, "replicas of running workloads", "the cell"},
	} {
		limit := max(b.limit, 0)
		if b.limit == 0 || b.delta <= 0 || b.held+b.delta <= limit {
			continue
		}
		how := "a cell manager raises the cell's limits in its configuration (strata cell config; docs/limits.md)"
		if b.where != "the cell" {
			how = "a cell manager raises the namespace's quota, or the cell's default for namespaces (docs/limits.md)"
		}
		return &LimitError{Field: b.field, Msg: fmt.Sprintf("%s would hold %d %s, above its limit of %d (it holds %d); stop or purge some, or %s",
			b.where, b.held+b.delta, b.what, limit, b.held, how)}
	}
	return nil
}

// restoreTallies counts a dump's workloads (restore.go).
func restoreTallies(txn *memdb.Txn, workloads []*api.Workload) error {
	counts := map[string]int64{}
	for _, wl := range workloads {
		ns := api.NamespaceOf(wl.Namespace)
		n, r := tallyOf(wl)
		counts[workloadCountKey] += n
		counts[workloadCountKey+"/"+ns] += n
		counts[replicaCountKey] += r
		counts[replicaCountKey+"/"+ns] += r
	}
	for key, v := range counts {
		if err := txn.Insert(tableCounters, &indexEntry{Table: key, Value: uint64(v)}); err != nil {
			return fmt.Errorf("restore %s: %w", key, err)
		}
	}
	return nil
}
