package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
)

// Deployments and the version history of workloads (docs/deployments.md).
// Both are replicated state: written only by FSM commands, carried by
// snapshots, removed with their workload on purge.

const (
	tableDeployments = "deployments"
	tableVersions    = "workloadVersions"
	// TableDeployments and TableVersions name the tables for blocking
	// queries (TableIndex).
	TableDeployments = tableDeployments
	TableVersions    = tableVersions
)

// MaxWorkloadVersions is how many versions of one workload the history
// keeps: the newest ones, and always the newest stable one (a revert's
// target), however old.
const MaxWorkloadVersions = 10

// versionRow is a row of tableVersions.
type versionRow struct {
	ID        string // namespace + NUL + workload + NUL + zero-padded version: sorts by version
	Namespace string
	Workload  string
	V         *api.WorkloadVersion
}

func versionKey(ns, name string, v uint64) string {
	return fmt.Sprintf("%s\x00%s\x00%020d", api.NamespaceOf(ns), name, v)
}

func newVersionRow(v *api.WorkloadVersion) *versionRow {
	ns := api.NamespaceOf(v.Workload.Namespace)
	return &versionRow{ID: versionKey(ns, v.Workload.Name, v.Version), Namespace: ns, Workload: v.Workload.Name, V: v}
}

func deploymentTables() map[string]*memdb.TableSchema {
	return map[string]*memdb.TableSchema{
		tableDeployments: {Name: tableDeployments, Indexes: map[string]*memdb.IndexSchema{
			"id":       {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			"workload": {Name: "workload", Indexer: byWorkload("Workload")},
		}},
		tableVersions: {Name: tableVersions, Indexes: map[string]*memdb.IndexSchema{
			"id":       {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			"workload": {Name: "workload", Indexer: byWorkload("Workload")},
		}},
	}
}

// Deployment returns a deployment by id, nil if none.
func (s *Snapshot) Deployment(id string) *api.Deployment {
	obj, err := s.txn.First(tableDeployments, "id", id)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*api.Deployment)
}

// Deployments lists every deployment, newest first.
func (s *Snapshot) Deployments(ws memdb.WatchSet) []*api.Deployment {
	return s.deployments(ws, "id")
}

// DeploymentsByWorkload lists a workload's deployments, newest first.
func (s *Snapshot) DeploymentsByWorkload(ws memdb.WatchSet, ns, name string) []*api.Deployment {
	return s.deployments(ws, "workload", ns, name)
}

func (s *Snapshot) deployments(ws memdb.WatchSet, index string, args ...any) []*api.Deployment {
	it, err := s.txn.Get(tableDeployments, index, args...)
	if err != nil {
		return nil
	}
	ws.Add(it.WatchCh())
	var out []*api.Deployment
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*api.Deployment))
	}
	slices.SortFunc(out, func(a, b *api.Deployment) int {
		if a.CreateIndex != b.CreateIndex {
			return int(int64(b.CreateIndex) - int64(a.CreateIndex))
		}
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
	return out
}

// LatestDeployment returns the workload's newest deployment, nil if none
// (scheduler.DeploymentReader).
func (s *Snapshot) LatestDeployment(ns, name string) *api.Deployment {
	if ds := s.DeploymentsByWorkload(nil, ns, name); len(ds) > 0 {
		return ds[0]
	}
	return nil
}

// WorkloadVersions lists the kept versions of a workload, oldest first.
func (s *Snapshot) WorkloadVersions(ws memdb.WatchSet, ns, name string) []*api.WorkloadVersion {
	it, err := s.txn.Get(tableVersions, "workload", ns, name)
	if err != nil {
		return nil
	}
	ws.Add(it.WatchCh())
	var rows []*versionRow
	for obj := it.Next(); obj != nil; obj = it.Next() {
		rows = append(rows, obj.(*versionRow))
	}
	slices.SortFunc(rows, func(a, b *versionRow) int {
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
	out := make([]*api.WorkloadVersion, len(rows))
	for i, r := range rows {
		out[i] = r.V
	}
	return out
}

// WorkloadVersion returns one kept version, nil if it is not kept.
func (s *Snapshot) WorkloadVersion(ns, name string, v uint64) *api.WorkloadVersion {
	obj, err := s.txn.First(tableVersions, "id", versionKey(ns, name, v))
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*versionRow).V
}

// LatestStableVersion returns the newest stable version older than
// before, nil if none is kept.
func (s *Snapshot) LatestStableVersion(ns, name string, before uint64) *api.WorkloadVersion {
	vs := s.WorkloadVersions(nil, ns, name)
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].Stable && vs[i].Version < before {
			return vs[i]
		}
	}
	return nil
}

// recordVersion adds the workload just stored to its history: stable when
// it needs no deployment and the version it follows was stable (or it is
// the first), then trims the history to MaxWorkloadVersions, keeping the
// newest stable version.
func (w *WriteTxn) recordVersion(wl *api.Workload, deploymentID string) error {
	snap := w.Snapshot()
	history := snap.WorkloadVersions(nil, wl.Namespace, wl.Name)
	stable := deploymentID == ""
	if stable && len(history) > 0 {
		stable = history[len(history)-1].Stable
	}
	v := &api.WorkloadVersion{Workload: wl, Version: wl.Version, Stable: stable, DeploymentID: deploymentID, SubmitTime: wl.SubmitTime}
	if err := w.insert(tableVersions, newVersionRow(v)); err != nil {
		return err
	}
	history = append(history, v)
	keepStable := -1
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Stable {
			keepStable = i
			break
		}
	}
	kept := len(history)
	for i := 0; kept > MaxWorkloadVersions && i < len(history); i++ {
		if i == keepStable {
			continue
		}
		if err := w.txn.Delete(tableVersions, newVersionRow(history[i])); err != nil {
			return fmt.Errorf("trim history of %s: %w", wl.Name, err)
		}
		kept--
	}
	return nil
}

// RegisterWorkload stores a new version of a workload (UpsertWorkload),
// records it in the history and, when d is set (a destructive update of a
// running workload), starts its deployment: d takes the version the
// workload got, and an unfinished earlier deployment is cancelled.
func (w *WriteTxn) RegisterWorkload(wl *api.Workload, d *api.Deployment, at time.Time) error {
	old := w.Snapshot().Workload(wl.Namespace, wl.Name)
	if err := w.UpsertWorkload(wl); err != nil {
		return err
	}
	id := ""
	if d != nil {
		if err := w.CancelDeployment(wl.Namespace, wl.Name, fmt.Sprintf("superseded by version %d", wl.Version), at); err != nil {
			return err
		}
		d.Namespace, d.Version = api.NamespaceOf(wl.Namespace), wl.Version
		if old != nil {
			d.FromVersion = old.Version
		}
		d.CreateTime, d.CreateIndex = at, w.index
		if err := w.putDeployment(d, at); err != nil {
			return err
		}
		id = d.ID
	}
	return w.recordVersion(wl, id)
}

// CancelDeployment cancels the workload's unfinished deployment, if any.
func (w *WriteTxn) CancelDeployment(ns, name, reason string, at time.Time) error {
	prev := w.Snapshot().LatestDeployment(ns, name)
	if prev == nil || api.DeploymentTerminal(prev.Status) {
		return nil
	}
	c := prev.Copy()
	c.Status, c.StatusDescription = api.DeploymentCancelled, reason
	return w.putDeployment(c, at)
}

func (w *WriteTxn) putDeployment(d *api.Deployment, at time.Time) error {
	d.ModifyTime, d.ModifyIndex = at, w.index
	if d.CreateIndex == 0 {
		d.CreateIndex = w.index
	}
	return w.insert(tableDeployments, d)
}

// ApplyDeploymentProgress records what a plan learned about a deployment.
// A deployment that is already final (failed, cancelled, successful: by a
// command that won the race) keeps its status. A successful one makes its
// version stable.
func (w *WriteTxn) ApplyDeploymentProgress(p *api.DeploymentProgress, at time.Time) error {
	cur := w.Snapshot().Deployment(p.ID)
	if cur == nil || api.DeploymentTerminal(cur.Status) {
		return nil
	}
	c := cur.Copy()
	c.Status, c.StatusDescription = p.Status, p.StatusDescription
	for _, g := range p.Groups {
		if dg := c.Group(g.Name); dg != nil {
			promoted := dg.Promoted || g.Promoted
			*dg = *g
			dg.Promoted = promoted
		}
	}
	if err := w.putDeployment(c, at); err != nil {
		return err
	}
	if c.Status == api.DeploymentSuccessful {
		return w.markStable(c.Namespace, c.Workload, c.Version)
	}
	return nil
}

func (w *WriteTxn) markStable(ns, name string, version uint64) error {
	v := w.Snapshot().WorkloadVersion(ns, name, version)
	if v == nil || v.Stable {
		return nil
	}
	c := *v
	c.Stable = true
	return w.insert(tableVersions, newVersionRow(&c))
}

// PromoteDeployment promotes the canaries of the named groups (all when
// groups is empty).
func (w *WriteTxn) PromoteDeployment(id string, groups []string, at time.Time) error {
	cur := w.Snapshot().Deployment(id)
	if cur == nil {
		return fmt.Errorf("deployment %q: %w", id, ErrNotFound)
	}
	if api.DeploymentTerminal(cur.Status) {
		return nil // the proposer checked; a race lost is no error
	}
	c := cur.Copy()
	for _, g := range c.Groups {
		if len(groups) == 0 || slices.Contains(groups, g.Name) {
			g.Promoted = true
		}
	}
	return w.putDeployment(c, at)
}

// FailDeployment marks a deployment failed, and with revertTo > 0 records
// that the workload was registered again at that version.
func (w *WriteTxn) FailDeployment(id, reason string, revertedTo uint64, at time.Time) error {
	cur := w.Snapshot().Deployment(id)
	if cur == nil {
		return fmt.Errorf("deployment %q: %w", id, ErrNotFound)
	}
	c := cur.Copy()
	if !api.DeploymentTerminal(c.Status) {
		c.Status, c.StatusDescription = api.DeploymentFailed, reason
	} else if c.Status != api.DeploymentFailed {
		return nil
	}
	if revertedTo > 0 {
		c.RevertedTo = revertedTo
	}
	return w.putDeployment(c, at)
}

// deleteDeploymentsAndVersions removes a purged workload's history and
// deployments.
func (w *WriteTxn) deleteDeploymentsAndVersions(ns, name string) error {
	for _, table := range []string{tableDeployments, tableVersions} {
		if _, err := w.txn.DeleteAll(table, "workload", ns, name); err != nil {
			return fmt.Errorf("purge %s of %s: %w", table, name, err)
		}
		w.touched[table] = true
	}
	return nil
}

func (s *Snapshot) dumpDeployments(d *Dump) {
	d.Deployments = s.Deployments(nil)
	it, err := s.txn.Get(tableVersions, "id")
	if err != nil {
		return
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		d.Versions = append(d.Versions, obj.(*versionRow).V)
	}
}

func restoreDeployments(txn *memdb.Txn, d *Dump) error {
	for _, dep := range d.Deployments {
		if err := txn.Insert(tableDeployments, dep); err != nil {
			return fmt.Errorf("restore deployments: %w", err)
		}
	}
	for _, v := range d.Versions {
		if v.Workload == nil {
			return fmt.Errorf("restore versions: version %d has no workload", v.Version)
		}
		if err := txn.Insert(tableVersions, newVersionRow(v)); err != nil {
			return fmt.Errorf("restore versions: %w", err)
		}
	}
	return nil
}

// UpdateAllocInPlace moves a live allocation to version u.Version of its
// workload (that version's group spec and priority) without touching
// what it runs: the scheduler found its spec unchanged. Nothing happens
// when the workload moved on meanwhile, the allocation is gone or no
// longer live, or the group is gone.
func (w *WriteTxn) UpdateAllocInPlace(u api.InPlaceUpdate) error {
	snap := w.Snapshot()
	a := snap.Alloc(u.AllocID)
	if a == nil || a.TaskGroup == nil || a.DesiredStatus != api.DesiredRun || a.Terminal() {
		return nil
	}
	wl := snap.Workload(a.Namespace, a.Workload)
	if wl == nil || wl.Version != u.Version {
		return nil
	}
	var g *api.TaskGroup
	for _, tg := range wl.Groups {
		if tg.Name == a.Group {
			g = tg
		}
	}
	if g == nil || g.Resources() != a.TaskGroup.Resources() {
		return nil
	}
	c := a.Copy()
	c.WorkloadVersion, c.Priority, c.TaskGroup = wl.Version, wl.Priority, g
	return w.UpsertAlloc(c)
}
