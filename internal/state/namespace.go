package state

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
)

// Tenants (docs/tenants.md): a workload is known by (namespace, name), so
// its allocations and evaluations are too. Objects stored before
// namespaces existed have an empty namespace; the indexes read it as the
// default one, so they are found where they always were.
//
// Each namespace's usage (api.QuotaUsage of its allocations that hold
// resources) is kept incrementally, like a node's Allocated, by the same
// write that changes an allocation: reading it never scans allocations.

const (
	tableNamespaces     = "namespaces"
	tableNamespaceUsage = "namespaceUsage"
)

// TableNamespaces names the namespaces table for TableIndex.
const TableNamespaces = tableNamespaces

// ErrNamespaceMissing refuses a workload in a namespace that does not
// exist (the default one always does).
var ErrNamespaceMissing = errors.New("namespace does not exist")

// ErrNamespaceNotEmpty refuses to delete a namespace that holds workloads.
var ErrNamespaceNotEmpty = errors.New("namespace holds workloads")

// namespaceUsage is a row of tableNamespaceUsage.
type namespaceUsage struct {
	Namespace string
	Usage     api.QuotaUsage
}

func namespaceTables() map[string]*memdb.TableSchema {
	return map[string]*memdb.TableSchema{
		tableNamespaces: {Name: tableNamespaces, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
		}},
		tableNamespaceUsage: {Name: tableNamespaceUsage, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Namespace"}},
		}},
	}
}

// byWorkload indexes workloads (field "Name"), allocations and evaluations
// (field "Workload") by (namespace, workload name).
func byWorkload(field string) memdb.Indexer {
	return &memdb.CompoundIndex{Indexes: []memdb.Indexer{
		namespaceIndex{},
		&memdb.StringFieldIndex{Field: field},
	}}
}

// namespaceIndex indexes an object by its namespace, "" read as the
// default namespace (in objects and in queries alike).
type namespaceIndex struct{}

func (namespaceIndex) FromObject(obj interface{}) (bool, []byte, error) {
	var ns string
	switch o := obj.(type) {
	case *api.Workload:
		ns = o.Namespace
	case *api.Allocation:
		ns = o.Namespace
	case *api.Evaluation:
		ns = o.Namespace
	case *api.Deployment:
		ns = o.Namespace
	case *versionRow:
		ns = o.Namespace
	default:
		return false, nil, fmt.Errorf("namespace index: unexpected %T", obj)
	}
	return true, []byte(api.NamespaceOf(ns) + "\x00"), nil
}

func (namespaceIndex) FromArgs(args ...interface{}) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("namespace index: one argument, got %d", len(args))
	}
	ns, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("namespace index: argument is %T, not a string", args[0])
	}
	return []byte(api.NamespaceOf(ns) + "\x00"), nil
}

// Namespace returns the named namespace or nil. The default namespace is
// nil until it is applied: it exists without a quota.
func (s *Snapshot) Namespace(name string) *api.Namespace {
	obj, err := s.txn.First(tableNamespaces, "id", name)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*api.Namespace)
}

// Namespaces returns the applied namespaces, sorted by name.
func (s *Snapshot) Namespaces(ws memdb.WatchSet) []*api.Namespace {
	it, err := s.txn.Get(tableNamespaces, "id")
	if err != nil {
		return nil
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	var out []*api.Namespace
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*api.Namespace))
	}
	return out
}

// NamespaceQuota is the quota of namespace ns, nil when it has none.
func (s *Snapshot) NamespaceQuota(ns string) *api.Quota {
	if n := s.Namespace(api.NamespaceOf(ns)); n != nil {
		return n.Quota
	}
	return nil
}

// NamespaceUsage is what namespace ns holds: the sum over its allocations
// that are not terminal.
func (s *Snapshot) NamespaceUsage(ns string) api.QuotaUsage {
	obj, err := s.txn.First(tableNamespaceUsage, "id", api.NamespaceOf(ns))
	if err != nil || obj == nil {
		return api.QuotaUsage{}
	}
	return obj.(*namespaceUsage).Usage
}

// UpsertNamespace stores a namespace (a fresh object owned by the store
// from now on).
func (w *WriteTxn) UpsertNamespace(ns *api.Namespace) error {
	if old := w.Snapshot().Namespace(ns.Name); old != nil {
		ns.CreateIndex = old.CreateIndex
	} else {
		ns.CreateIndex = w.index
	}
	ns.ModifyIndex = w.index
	return w.insert(tableNamespaces, ns)
}

// DeleteNamespace removes a namespace that holds no workload.
func (w *WriteTxn) DeleteNamespace(name string) error {
	old := w.Snapshot().Namespace(name)
	if old == nil {
		return fmt.Errorf("namespace %q: %w", name, ErrNotFound)
	}
	if n := len(w.Snapshot().WorkloadsIn(nil, name)); n > 0 {
		return fmt.Errorf("namespace %q holds %d workloads: %w", name, n, ErrNamespaceNotEmpty)
	}
	w.touched[tableNamespaces] = true
	return w.txn.Delete(tableNamespaces, old)
}

// addToNamespace moves a namespace's usage by delta.
func (w *WriteTxn) addToNamespace(ns string, delta api.QuotaUsage) error {
	ns = api.NamespaceOf(ns)
	u := w.Snapshot().NamespaceUsage(ns).Add(delta)
	if err := w.txn.Insert(tableNamespaceUsage, &namespaceUsage{Namespace: ns, Usage: u}); err != nil {
		return fmt.Errorf("namespace usage of %q: %w", ns, err)
	}
	return nil
}
