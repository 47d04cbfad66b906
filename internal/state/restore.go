package state

import (
	"fmt"

	"github.com/strata-dev/strata/api"
)

// Dump is the whole store as plain data, for FSM snapshots.
type Dump struct {
	Index     uint64            `json:"index"`
	Workloads []*api.Workload   `json:"workloads"`
	Nodes     []*api.Node       `json:"nodes"`
	Allocs    []*api.Allocation `json:"allocs"`
	Evals     []*api.Evaluation `json:"evals"`
	Events    []*api.Event      `json:"events,omitempty"`
	Config    *api.CellConfig   `json:"config,omitempty"`
	CellID    string            `json:"cellId,omitempty"`
	Indexes   map[string]uint64 `json:"indexes"`
	// The security state (security.go).
	NodeKeys    []*NodeKey        `json:"nodeKeys,omitempty"`
	CellSecrets []*CellSecret     `json:"cellSecrets,omitempty"`
	ACLPolicies []*api.ACLPolicy  `json:"aclPolicies,omitempty"`
	ACLTokens   []*ACLToken       `json:"aclTokens,omitempty"`
	Audit       []*api.AuditEntry `json:"audit,omitempty"`
	// Namespaces (namespace.go); their usage is recomputed on restore.
	Namespaces []*api.Namespace `json:"namespaces,omitempty"`
	// Deployments and the workloads' version history (deployments.go).
	Deployments []*api.Deployment      `json:"deployments,omitempty"`
	Versions    []*api.WorkloadVersion `json:"versions,omitempty"`
}

// Dump returns the snapshot's contents.
func (s *Snapshot) Dump() *Dump {
	d := &Dump{
		Index:      s.Index(),
		Workloads:  s.Workloads(nil),
		Nodes:      s.Nodes(),
		Allocs:     s.Allocs(nil),
		Evals:      s.Evals(nil),
		Events:     s.Events(nil, "", ""),
		Namespaces: s.Namespaces(nil),
		Indexes:    map[string]uint64{},
		CellID:     s.CellID(),
	}
	s.dumpSecurity(d)
	s.dumpDeployments(d)
	if c := s.CellConfig(); c.ModifyIndex > 0 {
		d.Config = c
	}
	for _, t := range []string{tableWorkloads, tableNodes, tableAllocs, tableEvals, tableEvents, tableConfig, tableNodeKeys, tableCellSecrets, tableACLPolicies, tableACLTokens, tableAudit, tableNamespaces, tableDeployments, tableVersions} {
		d.Indexes[t] = s.TableIndex(nil, t)
	}
	return d
}

// Restore builds a store from a dump, keeping every index as it was. The
// allocations' group specs are shared as the FSM shares them (groups.go).
func Restore(d *Dump) (*Store, error) {
	s := New()
	txn := s.db.Txn(true)
	defer txn.Abort()
	insert := func(table string, obj interface{}) error {
		if err := txn.Insert(table, obj); err != nil {
			return fmt.Errorf("restore %s: %w", table, err)
		}
		return nil
	}
	for _, w := range d.Workloads {
		if err := insert(tableWorkloads, w); err != nil {
			return nil, err
		}
	}
	for _, n := range d.Nodes {
		if err := insert(tableNodes, n); err != nil {
			return nil, err
		}
	}
	type wkey struct{ ns, name string }
	workloads := make(map[wkey]*api.Workload, len(d.Workloads))
	for _, w := range d.Workloads {
		workloads[wkey{api.NamespaceOf(w.Namespace), w.Name}] = w
	}
	groups := newGroupSharer(func(ns, name string) *api.Workload { return workloads[wkey{api.NamespaceOf(ns), name}] })
	usage := map[string]api.QuotaUsage{}
	for _, a := range d.Allocs {
		if tg := groups.canonical(a); tg != a.TaskGroup {
			c := *a // the dump's objects may be another store's
			c.TaskGroup = tg
			a = &c
		}
		if err := insert(tableAllocs, a); err != nil {
			return nil, err
		}
		if api.CountsAgainstQuota(a) {
			ns := api.NamespaceOf(a.Namespace)
			usage[ns] = usage[ns].Add(api.UsageOf(a.Resources))
		}
	}
	for ns, u := range usage {
		if err := insert(tableNamespaceUsage, &namespaceUsage{Namespace: ns, Usage: u}); err != nil {
			return nil, err
		}
	}
	for _, ns := range d.Namespaces {
		if err := insert(tableNamespaces, ns); err != nil {
			return nil, err
		}
	}
	for _, e := range d.Evals {
		if err := insert(tableEvals, e); err != nil {
			return nil, err
		}
	}
	for _, e := range d.Events {
		if err := insert(tableEvents, e); err != nil {
			return nil, err
		}
	}
	if d.Config != nil {
		if err := insert(tableConfig, &configRow{ID: cellConfigID, Config: d.Config}); err != nil {
			return nil, err
		}
	}
	if d.CellID != "" {
		if err := insert(tableConfig, &configRow{ID: cellIdentityID, CellID: d.CellID}); err != nil {
			return nil, err
		}
	}
	if err := restoreTallies(txn, d.Workloads); err != nil {
		return nil, err
	}
	if err := restoreSecurity(txn, d); err != nil {
		return nil, err
	}
	if err := restoreDeployments(txn, d); err != nil {
		return nil, err
	}
	if err := txn.Insert(tableCounters, &indexEntry{Table: eventCountKey, Value: uint64(len(d.Events))}); err != nil {
		return nil, fmt.Errorf("restore event count: %w", err)
	}
	for t, v := range d.Indexes {
		if err := setIndex(txn, t, v); err != nil {
			return nil, err
		}
	}
	txn.Commit()
	return s, nil
}
