package httpapi

import (
	"net/http"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// handleMigrateAlloc begins a checkpoint or a move of an allocation: it
// checks that the allocation and its node can do it, picks the target of
// a move (the one asked for, or the scheduler's choice), and commits the
// migration; the agents do the rest (docs/migration.md). It answers 202
// with the migration; its outcome shows on the allocation.
func (s *API) handleMigrateAlloc(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	var req api.MigrateRequest
	if err := route.DecodeJSON(w, r, "invalid-migrate-request", &req); err != nil {
		return err
	}
	switch req.Kind {
	case "":
		req.Kind = api.MigrationMove
	case api.MigrationMove, api.MigrationCheckpoint:
	default:
		return route.FieldError("invalid-migration", "kind", "must be migrate or checkpoint, got %q", req.Kind)
	}
	if req.To != "" {
		if req.Kind != api.MigrationMove {
			return route.FieldError("invalid-migration", "to", "only a move has a target node")
		}
		if problem := spec.CheckID(req.To); problem != "" {
			return route.FieldError("invalid-migration", "to", "%s", problem)
		}
	}
	ns, err := namespaceOf(r)
	if err != nil {
		return err
	}
	snap := s.state().Snapshot()
	a, err := findAlloc(snap, ns, id)
	if err != nil {
		return err
	}
	m, err := s.leader.PlanMigration(snap, a, req)
	if err != nil {
		return err
	}
	idx, answer, err := s.proposer.Propose(&fsm.Migrate{AllocID: a.ID, Op: fsm.MigrationOpBegin, Migration: m, Time: m.RequestedAt})
	if err != nil {
		return err
	}
	if ans, _ := answer.(fsm.Migrated); !ans.Applied {
		return route.Conflict("conflict", "allocation %s: %s", a.ID, ans.Reason)
	}
	out := *m
	out.Token = ""
	route.WriteJSON(w, http.StatusAccepted, map[string]any{"index": idx, "allocId": a.ID, "migration": &out})
	return nil
}

// handleMigrationOutcome takes an agent's report on a migration: the
// target's commit (through the plan applier, which checks that the target
// still has room, as for any placement), the source's abort, a
// checkpoint's end, or the source's figures. The answer says how the
// migration stands, whoever decided it.
func (s *API) handleMigrationOutcome(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	var req api.MigrationOutcomeRequest
	if err := route.DecodeJSON(w, r, "invalid-migration-outcome", &req); err != nil {
		return err
	}
	if problem := spec.CheckID(req.MigrationID); problem != "" {
		return route.FieldError("invalid-migration-outcome", "migrationId", "%s", problem)
	}
	switch req.Op {
	case api.MigrationOpCommit, api.MigrationOpAbort, api.MigrationOpDone, api.MigrationOpReport:
	default:
		return route.FieldError("invalid-migration-outcome", "op", "must be commit, abort, done or report, got %q", req.Op)
	}
	if problem := checkText(req.Reason, maxTextBytes); problem != "" {
		return route.FieldError("invalid-migration-outcome", "reason", "%s", problem)
	}
	if rep := req.Report; rep != nil && (rep.CheckpointBytes < 0 || rep.CheckpointMs < 0 || rep.TransferMs < 0 ||
		rep.RestoreMs < 0 || rep.CommitMs < 0 || rep.DowntimeMs < 0) {
		return route.FieldError("invalid-migration-outcome", "report", "figures must not be negative")
	}
	if err := migrationSpeaker(s.state().Snapshot(), id, req, nodeOf(r)); err != nil {
		return err
	}
	cmd := &fsm.Migrate{AllocID: id, Op: req.Op, MigrationID: req.MigrationID, Reason: req.Reason,
		Fallback: req.Fallback, Report: req.Report, Time: s.cfg.Now()}
	idx, answer, err := s.leader.CommitMove(r.Context(), cmd)
	if err != nil {
		return err
	}
	ans, _ := answer.(fsm.Migrated)
	route.WriteJSON(w, http.StatusOK, &api.MigrationOutcomeResponse{Applied: ans.Applied && cmd.Op == req.Op, Outcome: ans.Outcome, Reason: ans.Reason, Index: idx})
	return nil
}

// handleIncomingMigration is how a target agent checks an image it is
// offered: the allocation, with its migration's token, while a move of it
// to that node is in flight; 404 otherwise.
func (s *API) handleIncomingMigration(w http.ResponseWriter, r *http.Request) error {
	nodeID, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	allocID, err := route.PathID(r, "alloc")
	if err != nil {
		return err
	}
	snap := s.state().Snapshot()
	a := snap.Alloc(allocID)
	if a == nil || !a.Migration.Active() || a.Migration.Kind != api.MigrationMove || a.Migration.TargetNode != nodeID {
		return route.NotFound("no move of allocation %q to node %q is in flight", allocID, nodeID)
	}
	// As the node's allocation list has it: secrets opened (a restored
	// task that restarts on the target needs their values) and the
	// namespace's root policy.
	opened, err := s.openAlloc(withRootPolicy(snap, a))
	if err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, opened)
	return nil
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
		return route.Forbidden("node-forbidden", "node %s may not %s migration %s (only node %s may)", node, req.Op, m.ID, want)
	}
	return nil
}
