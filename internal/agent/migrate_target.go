package agent

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/spec"
)

// maxImageBytes bounds one migration image (all tasks together).
const maxImageBytes = 64 << 30

// receiveTimeout bounds receiving, restoring and committing one image.
const receiveTimeout = 15 * time.Minute

// handleReceiveImage is the target's side of a move (PUT
// /v1/agent/migrations/{id}): it accepts an image only for a move to this
// node that the server says is in flight, with that migration's token;
// restores the tasks stopped, in the target's cgroups; asks the server to
// commit the move; and resumes them only once the commit is applied. If
// the commit is refused (the source aborted first, or the node has no
// room left) the stopped tasks are killed: they never ran here.
func (a *Agent) handleReceiveImage(w http.ResponseWriter, r *http.Request) {
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
	mapi := a.migrationAPI()
	if mapi == nil {
		writeJSON(w, http.StatusServiceUnavailable, api.ErrorResponse{Error: "this agent cannot take migrations", Code: "unavailable"})
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, receiveTimeout)
	defer cancel()
	alloc, err := mapi.IncomingMigration(ctx, a.nodeID, allocID)
	if err != nil || alloc.Migration == nil || alloc.Migration.ID != mid ||
		subtle.ConstantTimeCompare([]byte(token), []byte(alloc.Migration.Token)) != 1 {
		a.log.Warn("refused a migration image", "alloc", allocID, "migration", mid, "err", err)
		writeJSON(w, http.StatusForbidden, api.ErrorResponse{Error: fmt.Sprintf("no move of allocation %s to this node in flight with that token", allocID), Code: "forbidden"})
		return
	}
	m := alloc.Migration
	a.mu.Lock()
	_, exists := a.allocs[allocID]
	a.mu.Unlock()
	if exists {
		writeJSON(w, http.StatusConflict, api.ErrorResponse{Error: "allocation " + allocID + " already has a runner on this node", Code: "conflict"})
		return
	}
	httplimit.Extend(w, receiveTimeout)
	receipt := a.receive(ctx, r, alloc, m)
	status := http.StatusOK
	if receipt.Outcome != api.MigrationCommitted {
		status = http.StatusConflict
	}
	writeJSON(w, status, receipt)
}

// receive does the work of handleReceiveImage once the offer is trusted.
func (a *Agent) receive(ctx context.Context, r *http.Request, alloc *api.Allocation, m *api.Migration) *ImageReceipt {
	start := time.Now()
	fail := func(format string, args ...any) *ImageReceipt {
		reason := fmt.Sprintf(format, args...)
		a.log.Warn("migration image not restored", "alloc", alloc.ID, "migration", m.ID, "reason", reason)
		return &ImageReceipt{Outcome: api.MigrationFailed, Reason: reason}
	}
	local := alloc.Copy()
	local.NodeID, local.NodeName, local.Assignment, local.Migration = a.nodeID, a.cfg.Name, m.TargetAssignment, nil
	ar, err := a.newAllocRunner(local, nil)
	if err == nil {
		err = ar.prepare()
	}
	if err != nil {
		return fail("%v", err)
	}
	// The source says how large the image is; without a figure the
	// allocation's memory limits bound it.
	need, _ := strconv.ParseInt(r.Header.Get(headerCheckpointBytes), 10, 64)
	if need <= 0 {
		for _, tr := range ar.tasks {
			need += tr.cfg.Resources.MemoryBytes
		}
	}
	store := a.pickImageStore(need)
	imgRoot := store.incomingDir(alloc.ID, ar.dir, m.ID)
	cleanup := func() {
		os.RemoveAll(ar.dir)
		a.removeTmpfsImages(alloc.ID)
	}
	want := map[string]bool{}
	for _, tr := range ar.tasks {
		want[tr.cfg.Name] = true
	}
	n, err := readImageBody(r, imgRoot, want, maxImageBytes)
	if err != nil {
		cleanup()
		return fail("%v", err)
	}
	receipt := &ImageReceipt{TransferMs: millis(time.Since(start))}
	a.log.Info("migration image received", "alloc", alloc.ID, "migration", m.ID, "bytes", n, "ms", receipt.TransferMs, "image_store", store.kind)

	restoreStart := time.Now()
	var restored []*taskRunner
	undo := func() {
		for _, tr := range restored {
			tr.driver.StopTask(tr.cfg.ID, 0)
			tr.driver.DestroyTask(tr.cfg.ID)
		}
		cleanup()
	}
	for _, tr := range ar.tasks {
		cp := tr.caps.Checkpoint
		ok := cp != nil
		if !ok || !cp.CanCheckpoint() {
			undo()
			return fail("task %s: its driver cannot restore on this node", tr.cfg.Name)
		}
		h, err := cp.RestoreTask(ctx, &tr.cfg, filepath.Join(imgRoot, tr.cfg.Name), true)
		if err != nil {
			undo()
			return fail("task %s: %v", tr.cfg.Name, err)
		}
		restored = append(restored, tr)
		adoptRestored(tr, h, alloc.TaskStates[tr.cfg.Name])
	}
	receipt.RestoreMs = millis(time.Since(restoreStart))

	// Known to reconcile before the commit, so that the allocation list
	// that follows the commit finds it here and does not start it afresh;
	// incoming keeps reconcile from stopping it before.
	ar.mu.Lock()
	ar.incoming = true
	ar.mu.Unlock()
	a.mu.Lock()
	a.allocs[alloc.ID] = ar
	a.mu.Unlock()
	commitStart := time.Now()
	resp, err := a.report(alloc.ID, &api.MigrationOutcomeRequest{MigrationID: m.ID, Op: api.MigrationOpCommit})
	receipt.CommitMs = millis(time.Since(commitStart))
	if err != nil || resp.Outcome != api.MigrationCommitted {
		// Refused, or unknown: these copies never ran. Should the commit
		// have applied after all, the allocation is listed here with no
		// runner and starts afresh: never two copies, never none.
		a.mu.Lock()
		if a.allocs[alloc.ID] == ar {
			delete(a.allocs, alloc.ID)
		}
		a.mu.Unlock()
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
	for _, tr := range ar.tasks {
		if err := tr.caps.Checkpoint.ResumeTask(tr.cfg.ID); err != nil {
			ar.log.Error("resume restored task", "task", tr.cfg.Name, "err", err)
		}
	}
	ar.mu.Lock()
	ar.incoming = false
	ar.mu.Unlock()
	os.RemoveAll(imgRoot)
	a.removeTmpfsImages(alloc.ID)
	ar.persist()
	ar.start()
	a.markDirty(alloc.ID)
	receipt.Outcome = api.MigrationCommitted
	a.log.Info("migration committed; restored tasks resumed", "alloc", alloc.ID, "migration", m.ID,
		"transfer_ms", receipt.TransferMs, "restore_ms", receipt.RestoreMs, "commit_ms", receipt.CommitMs)
	return receipt
}

// adoptRestored makes tr the runner of a restored task: running, with the
// restart count it had on the source.
func adoptRestored(tr *taskRunner, h *drivers.TaskHandle, was *api.TaskState) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.handle = h
	tr.state = api.TaskState{State: api.TaskRunning, PID: h.PID, StartedAt: h.StartedAt, RunsAs: runsAs(tr.procRoot, h.PID),
		Message: "restored from a checkpoint (migration)"}
	if was != nil {
		tr.state.Restarts = was.Restarts
		if !was.StartedAt.IsZero() {
			tr.state.StartedAt = was.StartedAt
		}
	}
}
