package migrate

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/spec"
)

// maxImageBytes bounds one migration image (all tasks together).
const maxImageBytes = 64 << 30

// receiveTimeout bounds receiving, restoring and committing one image.
const receiveTimeout = 15 * time.Minute

// Receive is the target's side of a move (PUT /v1/agent/migrations/{id}):
// it accepts an image only for a move to this node that the servers say
// is in flight, with that migration's token; restores the tasks stopped,
// in the target's cgroups; asks the servers to commit the move; and
// resumes them only once the commit is applied. If the commit is refused
// (the source aborted first, or the node has no room left) the stopped
// tasks are killed: they never ran here. ctx ends with the agent.
func (m *Migrator) Receive(ctx context.Context, w http.ResponseWriter, r *http.Request, runners Runners) {
	mid := r.PathValue("id")
	if problem := spec.CheckID(mid); problem != "" {
		badParam(w, "id", problem)
		return
	}
	allocID := r.Header.Get(headerAllocID)
	if problem := spec.CheckID(allocID); problem != "" {
		badParam(w, headerAllocID, problem)
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		writeJSON(w, http.StatusUnauthorized, api.ErrorResponse{Error: "a migration token is required", Code: "unauthorized"})
		return
	}
	if m.cfg.API == nil {
		writeJSON(w, http.StatusServiceUnavailable, api.ErrorResponse{Error: "this agent cannot take migrations", Code: "unavailable"})
		return
	}
	ctx, cancel := context.WithTimeout(ctx, receiveTimeout)
	defer cancel()
	alloc, err := m.cfg.API.IncomingMigration(ctx, m.cfg.NodeID, allocID)
	if err != nil || alloc.Migration == nil || alloc.Migration.ID != mid ||
		subtle.ConstantTimeCompare([]byte(token), []byte(alloc.Migration.Token)) != 1 {
		m.cfg.Log.Warn("refused a migration image", "alloc", allocID, "migration", mid, "err", err)
		writeJSON(w, http.StatusForbidden, api.ErrorResponse{Error: fmt.Sprintf("no move of allocation %s to this node in flight with that token", allocID), Code: "forbidden"})
		return
	}
	if runners.Has(allocID) {
		writeJSON(w, http.StatusConflict, api.ErrorResponse{Error: "allocation " + allocID + " already has a runner on this node", Code: "conflict"})
		return
	}
	httplimit.Extend(w, receiveTimeout)
	receipt := m.receive(ctx, r, alloc, alloc.Migration, runners)
	status := http.StatusOK
	if receipt.Outcome != api.MigrationCommitted {
		status = http.StatusConflict
	}
	writeJSON(w, status, receipt)
}

// receive does the work of Receive once the offer is trusted.
func (m *Migrator) receive(ctx context.Context, r *http.Request, alloc *api.Allocation, mig *api.Migration, runners Runners) *ImageReceipt {
	start := time.Now()
	fail := func(format string, args ...any) *ImageReceipt {
		reason := fmt.Sprintf(format, args...)
		m.cfg.Log.Warn("migration image not restored", "alloc", alloc.ID, "migration", mig.ID, "reason", reason)
		return &ImageReceipt{Outcome: api.MigrationFailed, Reason: reason}
	}
	local := alloc.Copy()
	local.NodeID, local.NodeName, local.Assignment, local.Migration = m.cfg.NodeID, m.cfg.NodeName, mig.TargetAssignment, nil
	in, err := runners.New(local)
	if err != nil {
		return fail("%v", err)
	}
	tasks := in.Tasks()
	// The source says how large the image is; without a figure the
	// allocation's memory limits bound it.
	need, _ := strconv.ParseInt(r.Header.Get(headerCheckpointBytes), 10, 64)
	if need <= 0 {
		for _, t := range tasks {
			need += t.Config().Resources.MemoryBytes
		}
	}
	store := m.cfg.Images.pickImageStore(need)
	imgRoot := store.incomingDir(alloc.ID, in.Dir(), mig.ID)
	cleanup := func() {
		os.RemoveAll(in.Dir())
		m.cfg.Images.Remove(alloc.ID)
	}
	want := map[string]bool{}
	for _, t := range tasks {
		want[t.Config().Name] = true
	}
	n, err := readImageBody(r, imgRoot, want, maxImageBytes)
	if err != nil {
		cleanup()
		return fail("%v", err)
	}
	receipt := &ImageReceipt{TransferMs: millis(time.Since(start))}
	m.cfg.Log.Info("migration image received", "alloc", alloc.ID, "migration", mig.ID, "bytes", n, "ms", receipt.TransferMs, "image_store", store.kind)

	restoreStart := time.Now()
	var restored []Task
	undo := func() {
		for _, t := range restored {
			t.Driver().Driver.StopTask(t.Config().ID, 0)
			t.Driver().Driver.DestroyTask(t.Config().ID)
		}
		cleanup()
	}
	for _, t := range tasks {
		cfg := t.Config()
		cp := t.Driver().Checkpoint
		if cp == nil || !cp.CanCheckpoint() {
			undo()
			return fail("task %s: its driver cannot restore on this node", cfg.Name)
		}
		h, err := cp.RestoreTask(ctx, cfg, filepath.Join(imgRoot, cfg.Name), true)
		if err != nil {
			undo()
			return fail("task %s: %v", cfg.Name, err)
		}
		restored = append(restored, t)
		in.Adopt(t, h, alloc.TaskStates[cfg.Name])
	}
	receipt.RestoreMs = millis(time.Since(restoreStart))

	// Known to the agent before the commit, so that the allocation list
	// that follows the commit finds it here and does not start it
	// afresh; incoming keeps the agent from stopping it before.
	in.Register()
	commitStart := time.Now()
	resp, err := m.report(ctx, alloc.ID, &api.MigrationOutcomeRequest{MigrationID: mig.ID, Op: api.MigrationOpCommit})
	receipt.CommitMs = millis(time.Since(commitStart))
	if err != nil || resp.Outcome != api.MigrationCommitted {
		// Refused, or unknown: these copies never ran. Should the commit
		// have applied after all, the allocation is listed here with no
		// runner and starts afresh: never two copies, never none.
		in.Drop()
		undo()
		if err != nil {
			return &ImageReceipt{Reason: "commit outcome unknown: " + err.Error()}
		}
		outcome := resp.Outcome
		if outcome == "" {
			outcome = api.MigrationFailed
		}
		return &ImageReceipt{Outcome: outcome, Reason: "commit refused: " + resp.Reason}
	}
	for _, t := range tasks {
		if err := t.Driver().Checkpoint.ResumeTask(t.Config().ID); err != nil {
			in.Log().Error("resume restored task", "task", t.Config().Name, "err", err)
		}
	}
	os.RemoveAll(imgRoot)
	m.cfg.Images.Remove(alloc.ID)
	in.Commit()
	receipt.Outcome = api.MigrationCommitted
	m.cfg.Log.Info("migration committed; restored tasks resumed", "alloc", alloc.ID, "migration", mig.ID,
		"transfer_ms", receipt.TransferMs, "restore_ms", receipt.RestoreMs, "commit_ms", receipt.CommitMs)
	return receipt
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func badParam(w http.ResponseWriter, name, msg string) {
	writeJSON(w, http.StatusBadRequest, api.ErrorResponse{Error: name + ": " + msg, Code: "invalid-parameter",
		Fields: []api.FieldError{{Path: name, Message: msg}}})
}
