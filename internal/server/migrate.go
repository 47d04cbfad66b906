package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// checkpointableDrivers are the task drivers whose tasks a node with a
// working criu can checkpoint and restore.
var checkpointableDrivers = scheduler.CheckpointableDrivers

func conflict(format string, args ...any) error {
	return &httpError{status: http.StatusConflict, code: "conflict", msg: fmt.Sprintf(format, args...)}
}

// handleMigrateAlloc begins a checkpoint or a move of an allocation: it
// checks that the allocation and its node can do it, picks the target of
// a move (the one asked for, or the scheduler's choice), and commits the
// migration; the agents do the rest (docs/migration.md). It answers 202
// with the migration; its outcome shows on the allocation.
func (s *Server) handleMigrateAlloc(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	var req api.MigrateRequest
	if err := decodeJSON(w, r, "invalid-migrate-request", &req); err != nil {
		s.fail(w, err)
		return
	}
	switch req.Kind {
	case "":
		req.Kind = api.MigrationMove
	case api.MigrationMove, api.MigrationCheckpoint:
	default:
		s.fail(w, fieldError("invalid-migration", "kind", "must be migrate or checkpoint, got %q", req.Kind))
		return
	}
	if req.To != "" {
		if req.Kind != api.MigrationMove {
			s.fail(w, fieldError("invalid-migration", "to", "only a move has a target node"))
			return
		}
		if problem := spec.CheckID(req.To); problem != "" {
			s.fail(w, fieldError("invalid-migration", "to", "%s", problem))
			return
		}
	}
	ns, err := namespaceOf(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	snap := s.State().Snapshot()
	a, err := findAlloc(snap, ns, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	m, err := s.planMigration(snap, a, req)
	if err != nil {
		s.fail(w, err)
		return
	}
	idx, answer, err := s.proposeFor(cmdMigrate, &migrateCmd{AllocID: a.ID, Op: migrationOpBegin, Migration: m, Time: m.RequestedAt})
	if err != nil {
		s.fail(w, err)
		return
	}
	if ans, _ := answer.(migrated); !ans.Applied {
		s.fail(w, conflict("allocation %s: %s", a.ID, ans.Reason))
		return
	}
	out := *m
	out.Token = ""
	writeJSON(w, http.StatusAccepted, map[string]any{"index": idx, "allocId": a.ID, "migration": &out})
}

// planMigration checks that a can be checkpointed (and moved) and builds
// its migration. Nothing is written.
func (s *Server) planMigration(snap *state.Snapshot, a *api.Allocation, req api.MigrateRequest) (*api.Migration, error) {
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
	m := &api.Migration{ID: newID(), Kind: req.Kind, SourceNode: source.ID, RequestedAt: s.cfg.Now(),
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
			var he *httpError
			if errors.As(err, &he) {
				he.msg, he.fields = "to: "+he.msg, []api.FieldError{{Path: "to", Message: he.msg}}
			}
			return nil, err
		}
		if err := targetProblem(snap, a, source, target); err != nil {
			return nil, err
		}
	} else {
		var err error
		if target, m.TargetAssignment, err = s.chooseTarget(snap, a, m.ID); err != nil {
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
		if source.Checkpoint.KeepsMemoryOf(t.Driver) && !target.Checkpoint.KeepsMemoryOf(t.Driver) {
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

// targetProblem checks a target the user named: another ready node that
// can restore and has room for the allocation.
func targetProblem(snap *state.Snapshot, a *api.Allocation, source, target *api.Node) error {
	switch {
	case target.ID == source.ID:
		return fieldError("invalid-migration", "to", "node %s already runs allocation %s", target.Name, a.ID)
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
func (s *Server) chooseTarget(snap *state.Snapshot, a *api.Allocation, migrationID string) (*api.Node, api.Assignment, error) {
	view := &migrationView{Snapshot: snap, alloc: a, source: snap.Node(a.NodeID)}
	eval := &api.Evaluation{ID: migrationID, Namespace: a.Namespace, Workload: a.Workload, Priority: a.Priority, Status: api.EvalPending}
	plan := scheduler.Schedule(view, eval, scheduler.Options{Seed: evalSeed(migrationID, 0), IDNonce: randomNonce(),
		Now: s.cfg.Now(), Cell: snap.CellConfig(), Policies: policies(snap)})
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

// handleMigrationOutcome takes an agent's report on a migration: the
// target's commit (through the plan applier, which checks that the target
// still has room, as for any placement), the source's abort, a
// checkpoint's end, or the source's figures. The answer says how the
// migration stands, whoever decided it.
func (s *Server) handleMigrationOutcome(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	var req api.MigrationOutcomeRequest
	if err := decodeJSON(w, r, "invalid-migration-outcome", &req); err != nil {
		s.fail(w, err)
		return
	}
	if problem := spec.CheckID(req.MigrationID); problem != "" {
		s.fail(w, fieldError("invalid-migration-outcome", "migrationId", "%s", problem))
		return
	}
	switch req.Op {
	case api.MigrationOpCommit, api.MigrationOpAbort, api.MigrationOpDone, api.MigrationOpReport:
	default:
		s.fail(w, fieldError("invalid-migration-outcome", "op", "must be commit, abort, done or report, got %q", req.Op))
		return
	}
	if problem := checkText(req.Reason, maxTextBytes); problem != "" {
		s.fail(w, fieldError("invalid-migration-outcome", "reason", "%s", problem))
		return
	}
	if rep := req.Report; rep != nil && (rep.CheckpointBytes < 0 || rep.CheckpointMs < 0 || rep.TransferMs < 0 ||
		rep.RestoreMs < 0 || rep.CommitMs < 0 || rep.DowntimeMs < 0) {
		s.fail(w, fieldError("invalid-migration-outcome", "report", "figures must not be negative"))
		return
	}
	snap := s.State().Snapshot()
	node, err := s.authenticateNode(r, snap, "")
	if err != nil {
		s.fail(w, err)
		return
	}
	if err := migrationSpeaker(snap, id, req, node); err != nil {
		s.fail(w, err)
		return
	}
	cmd := &migrateCmd{AllocID: id, Op: req.Op, MigrationID: req.MigrationID, Reason: req.Reason,
		Fallback: req.Fallback, Report: req.Report, Time: s.cfg.Now()}
	var idx uint64
	var answer any
	if req.Op == api.MigrationOpCommit {
		// The move is a placement on the target: the single writer of
		// placements checks and commits it (invariant 2).
		var out any
		out, err = s.plans.Do(r.Context(), func() (any, error) {
			snap := s.State().Snapshot()
			if a := snap.Alloc(id); a != nil && a.Migration.Active() && a.Migration.ID == req.MigrationID {
				target := snap.Node(a.Migration.TargetNode)
				moved := []*api.Allocation{movedTo(a, &api.Node{ID: a.Migration.TargetNode}, a.Migration.TargetAssignment)}
				if ok, why := scheduler.CheckNode(target, snap.AllocsByNode(a.Migration.TargetNode), nil, moved); !ok {
					cmd.Op, cmd.Reason = api.MigrationOpAbort, "the target node no longer has room: "+why
				}
			}
			i, ans, err := s.proposeFor(cmdMigrate, cmd)
			return [2]any{i, ans}, err
		})
		if err == nil {
			pair := out.([2]any)
			idx, answer = pair[0].(uint64), pair[1]
		}
	} else {
		idx, answer, err = s.proposeFor(cmdMigrate, cmd)
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	ans, _ := answer.(migrated)
	writeJSON(w, http.StatusOK, &api.MigrationOutcomeResponse{Applied: ans.Applied && cmd.Op == req.Op, Outcome: ans.Outcome, Reason: ans.Reason, Index: idx})
}

// handleIncomingMigration is how a target agent checks an image it is
// offered: the allocation, with its migration's token, while a move of it
// to that node is in flight; 404 otherwise.
func (s *Server) handleIncomingMigration(w http.ResponseWriter, r *http.Request) {
	nodeID, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	allocID, err := pathID(r, "alloc")
	if err != nil {
		s.fail(w, err)
		return
	}
	snap := s.State().Snapshot()
	if _, err := s.authenticateNode(r, snap, nodeID); err != nil {
		s.fail(w, err)
		return
	}
	a := snap.Alloc(allocID)
	if a == nil || !a.Migration.Active() || a.Migration.Kind != api.MigrationMove || a.Migration.TargetNode != nodeID {
		s.fail(w, notFound("no move of allocation %q to node %q is in flight", allocID, nodeID))
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// redactAllocs hides migration tokens from the public API: only the agents
// of a migration read them (agent endpoints). Allocations are shared with
// the store, so those with a token are copied.
func redactAllocs(allocs []*api.Allocation) []*api.Allocation {
	var out []*api.Allocation
	for i, a := range allocs {
		if a.Migration == nil || a.Migration.Token == "" {
			continue
		}
		if out == nil {
			out = append([]*api.Allocation(nil), allocs...)
		}
		out[i] = redactAlloc(a)
	}
	if out == nil {
		return allocs
	}
	return out
}

func redactAlloc(a *api.Allocation) *api.Allocation {
	if a == nil || a.Migration == nil || a.Migration.Token == "" {
		return a
	}
	c := a.Copy()
	c.Migration.Token = ""
	return c
}

// migrationSpeaker checks that node may report req on the allocation's
// migration (invariant 9: an agent speaks only for its own node): the
// target commits a move it restored; the source commits a fallback, aborts
// and reports. A report about a migration that is not the allocation's
// is let through: the FSM answers it.
func migrationSpeaker(snap *state.Snapshot, allocID string, req api.MigrationOutcomeRequest, node string) error {
	a := snap.Alloc(allocID)
	if a == nil || a.Migration == nil || a.Migration.ID != req.MigrationID {
		return nil
	}
	m := a.Migration
	want := m.SourceNode
	if req.Op == api.MigrationOpCommit && !req.Fallback {
		want = m.TargetNode
	}
	if node != want {
		return &httpError{status: http.StatusForbidden, code: "node-forbidden",
			msg: fmt.Sprintf("node %s may not %s migration %s (only node %s may)", node, req.Op, m.ID, want)}
	}
	return nil
}
