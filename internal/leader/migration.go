package leader

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/noderef"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/state"
)

// checkpointableDrivers are the task drivers whose tasks a node with a
// working criu can checkpoint and restore.
var checkpointableDrivers = scheduler.CheckpointableDrivers

// PlanMigration checks that a can be checkpointed (and moved) and builds
// its migration: the target of a move is the one req names, or the
// scheduler's choice. Nothing is written; a migration that cannot be is a
// Refusal saying why.
func (l *Leader) PlanMigration(snap *state.Snapshot, a *api.Allocation, req api.MigrateRequest) (*api.Migration, error) {
	if a.DesiredStatus != api.DesiredRun || a.ClientStatus != api.AllocRunning {
		return nil, conflict("allocation %s is %s (desired %s): only a running allocation can be checkpointed", a.ID, a.ClientStatus, a.DesiredStatus)
	}
	if a.Migration.Active() {
		return nil, conflict("allocation %s: %s %s is in flight", a.ID, a.Migration.Kind, a.Migration.ID)
	}
	for _, t := range a.TaskGroup.Tasks {
		if !checkpointableDrivers[t.Driver] {
			return nil, conflict("allocation %s: task %s uses driver %q, which cannot checkpoint", a.ID, t.Name, t.Driver)
		}
	}
	source := snap.Node(a.NodeID)
	if source == nil {
		return nil, conflict("allocation %s: its node %s is gone", a.ID, a.NodeID)
	}
	if why := cannotCheckpoint(source); why != "" {
		return nil, conflict("allocation %s: node %s cannot checkpoint: %s", a.ID, source.Name, why)
	}
	m := &api.Migration{ID: l.make.NewID(), Kind: req.Kind, SourceNode: source.ID, RequestedAt: l.cfg.Now(),
		TargetAssignment: api.Assignment{NUMANode: -1}}
	if req.Kind == api.MigrationCheckpoint {
		return m, nil
	}
	if len(a.Assignment.CPUs) > 0 || len(a.Assignment.GPUs) > 0 || a.Assignment.GPUMilli > 0 || len(a.Assignment.Devices) > 0 {
		return nil, conflict("allocation %s holds exclusive cores, GPUs or devices: moving those is not supported yet", a.ID)
	}
	var target *api.Node
	if req.To != "" {
		var err error
		if target, err = findNode(snap, req.To); err != nil {
			return nil, err
		}
		if err := targetProblem(snap, a, source, target); err != nil {
			return nil, err
		}
	} else {
		var err error
		if target, m.TargetAssignment, err = l.chooseTarget(snap, a, m.ID); err != nil {
			return nil, err
		}
	}
	m.TargetNode, m.TargetNodeName, m.TargetAddr = target.ID, target.Name, target.HTTPAddr
	m.Token = newToken()
	return m, nil
}

// cannotRestore says why target cannot restore what source dumps of a's
// tasks: it cannot checkpoint, or it cannot keep the memory of a task
// whose memory source keeps (its containerd's runc has no criu, or it
// runs exec tasks namespaced); "" when it can.
func cannotRestore(a *api.Allocation, source, target *api.Node) string {
	if why := cannotCheckpoint(target); why != "" {
		return why
	}
	if source == nil {
		return "the allocation's node is gone"
	}
	for _, t := range a.TaskGroup.Tasks {
		if st := a.TaskStates[t.Name]; source.Checkpoint.KeepsMemoryOfTask(t, st) && !target.Checkpoint.KeepsMemoryOfTask(t, st) {
			return fmt.Sprintf("task %s: the node does not restore %s tasks with their memory", t.Name, driverName(t.Driver))
		}
	}
	return ""
}

func driverName(d string) string {
	if d == "" {
		return "exec"
	}
	return d
}

// cannotCheckpoint says why node cannot checkpoint; "" when it can.
func cannotCheckpoint(n *api.Node) string {
	switch {
	case n.Checkpoint == nil:
		return "its agent does not say it can (no checkpoint attribute)"
	case !n.Checkpoint.Available:
		return n.Checkpoint.Reason
	}
	return ""
}

// findNode resolves the node a request names by its id, a unique prefix
// of it, or its name (internal/noderef), for the request's field "to": a
// reference several nodes match is refused with the candidates.
func findNode(snap *state.Snapshot, ref string) (*api.Node, error) {
	if n := snap.Node(ref); n != nil {
		return n, nil
	}
	n, err := noderef.Resolve(snap.Nodes(), ref)
	var amb *noderef.AmbiguousError
	switch {
	case err == nil:
		return n, nil
	case errors.As(err, &amb):
		return nil, &Refusal{Kind: RefusedInvalid, Code: "ambiguous", Field: "to", Msg: err.Error()}
	}
	return nil, &Refusal{Kind: RefusedNotFound, Field: "to", Msg: "to: " + err.Error(), FieldMsg: err.Error()}
}

// targetProblem checks a target the user named: another ready node that
// can restore and has room for the allocation.
func targetProblem(snap *state.Snapshot, a *api.Allocation, source, target *api.Node) error {
	switch {
	case target.ID == source.ID:
		return &Refusal{Kind: RefusedInvalid, Code: "invalid-migration", Field: "to", Msg: fmt.Sprintf("node %s already runs allocation %s", target.Name, a.ID)}
	case !target.Ready():
		return conflict("target node %s is %s", target.Name, target.Status)
	case target.HTTPAddr == "":
		return conflict("target node %s has no agent address to send the image to", target.Name)
	}
	if why := cannotRestore(a, source, target); why != "" {
		return conflict("target node %s cannot restore: %s", target.Name, why)
	}
	if ok, why := scheduler.CheckNode(target, snap.AllocsByNode(target.ID), nil, []*api.Allocation{movedTo(a, target, api.Assignment{NUMANode: -1})}); !ok {
		return conflict("target node %s cannot take allocation %s: %s", target.Name, a.ID, why)
	}
	return nil
}

// movedTo is a as it would be on target.
func movedTo(a *api.Allocation, target *api.Node, asg api.Assignment) *api.Allocation {
	c := a.Copy()
	c.NodeID, c.NodeName, c.Assignment, c.Migration = target.ID, target.Name, asg, nil
	return c
}

// chooseTarget asks the scheduler where the allocation would go if its
// node were gone, among the ready nodes that can restore it: the same pure
// function, on a view of the snapshot (migrationView), with a seed from
// the migration id.
func (l *Leader) chooseTarget(snap *state.Snapshot, a *api.Allocation, migrationID string) (*api.Node, api.Assignment, error) {
	view := &migrationView{Snapshot: snap, alloc: a, source: snap.Node(a.NodeID)}
	eval := &api.Evaluation{ID: migrationID, Namespace: a.Namespace, Workload: a.Workload, Priority: a.Priority, Status: api.EvalPending}
	plan := l.cfg.schedule(view, eval, scheduler.Options{Seed: evalSeed(migrationID, 0), IDNonce: randomNonce(),
		Now: l.cfg.Now(), Cell: snap.CellConfig(), Policies: policies(snap)})
	for nodeID, placed := range plan.Place {
		for _, p := range placed {
			if p.PreviousAlloc == a.ID {
				return snap.Node(nodeID), p.Assignment, nil
			}
		}
	}
	var why []string
	for _, f := range plan.Failures {
		if f.Group == a.Group && f.Summary != "" {
			why = append(why, f.Summary)
		}
	}
	if len(why) == 0 {
		why = append(why, "no other ready node that can restore it has room")
	}
	return nil, api.Assignment{}, conflict("no target node for allocation %s: %s", a.ID, strings.Join(why, "; "))
}

// migrationView is the snapshot as the scheduler must see it to choose a
// migration's target: the allocation has no node (so its replica is
// placed anew, with it as PreviousAlloc), and nodes that cannot take it
// (its own node, nodes that cannot restore, nodes without an agent
// address) are not ready. Everything else is the snapshot.
type migrationView struct {
	*state.Snapshot
	alloc  *api.Allocation
	source *api.Node // the allocation's node
}

var _ scheduler.State = (*migrationView)(nil)

func (v *migrationView) excluded(n *api.Node) bool {
	return n.ID == v.alloc.NodeID || n.HTTPAddr == "" || cannotRestore(v.alloc, v.source, n) != ""
}

func (v *migrationView) view(n *api.Node) *api.Node {
	if n == nil || !n.Ready() || !v.excluded(n) {
		return n
	}
	c := n.Copy()
	c.Status, c.StatusReason = api.NodeDraining, "cannot take the migration"
	return c
}

func (v *migrationView) Nodes() []*api.Node {
	nodes := v.Snapshot.Nodes()
	out := make([]*api.Node, len(nodes))
	for i, n := range nodes {
		out[i] = v.view(n)
	}
	return out
}

func (v *migrationView) Node(id string) *api.Node { return v.view(v.Snapshot.Node(id)) }

func (v *migrationView) AllocsByWorkload(ns, name string) []*api.Allocation {
	allocs := v.Snapshot.AllocsByWorkload(ns, name)
	out := make([]*api.Allocation, len(allocs))
	for i, a := range allocs {
		if a.ID == v.alloc.ID {
			c := a.Copy()
			c.NodeID = "" // no node: the scheduler replaces it
			a = c
		}
		out[i] = a
	}
	return out
}

// newToken is the bearer secret of one image transfer.
func newToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}
