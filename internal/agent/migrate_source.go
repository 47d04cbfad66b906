package agent

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/strata-dev/strata/api"
)

// reportRetry bounds how long an agent keeps asking the servers to record
// a migration step whose outcome decides what runs where.
const reportRetry = 2 * time.Minute

// takeUpMigration starts the migration the server's copy of the
// allocation carries, when it is in flight from this node and the runner
// has not taken it up yet (reconcile, without a.mu).
func (ar *allocRunner) takeUpMigration(alloc *api.Allocation) {
	m := alloc.Migration
	if !m.Active() || m.SourceNode != ar.agent.nodeID {
		return
	}
	ar.mu.Lock()
	if ar.migrating != "" || ar.migrationsSeen[m.ID] || ar.forgotten {
		ar.mu.Unlock()
		return
	}
	ar.migrating = m.ID
	if ar.migrationsSeen == nil {
		ar.migrationsSeen = map[string]bool{}
	}
	ar.migrationsSeen[m.ID] = true
	ar.mu.Unlock()
	ar.persist() // the record names the migration: a restarted agent settles it first
	mc := *m
	ar.agent.wg.Add(1)
	go func() {
		defer ar.agent.wg.Done()
		defer func() {
			ar.mu.Lock()
			ar.migrating = ""
			ar.mu.Unlock()
		}()
		if mc.Kind == api.MigrationCheckpoint {
			ar.checkpoint(&mc)
			return
		}
		ar.migrate(&mc)
	}()
}

// migratingNow reports whether a migration of the allocation is in flight
// on this node (as source or, before its commit, as target).
func (ar *allocRunner) migratingNow() bool {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return ar.migrating != "" || ar.incoming
}

// report records a migration step, retrying until the servers answer or
// reportRetry passes.
func (a *Agent) report(allocID string, req *api.MigrationOutcomeRequest) (*api.MigrationOutcomeResponse, error) {
	mapi := a.migrationAPI()
	if mapi == nil {
		return nil, fmt.Errorf("the agent's server API cannot report migrations")
	}
	deadline := time.Now().Add(reportRetry)
	var delay time.Duration
	for {
		resp, err := mapi.ReportMigration(a.ctx, allocID, req)
		if err == nil {
			return resp, nil
		}
		if a.ctx.Err() != nil || time.Now().After(deadline) {
			return nil, err
		}
		delay = retryBackoff(delay)
		a.log.Warn("report migration step failed; retrying", "alloc", allocID, "op", req.Op, "err", err, "retry_in", delay)
		sleepCtx(a.ctx, delay)
	}
}

// checkpoint writes a checkpoint of every task, leaving them running, into
// <task dir>/checkpoint (the previous one is replaced), and reports it.
func (ar *allocRunner) checkpoint(m *api.Migration) {
	a := ar.agent
	rep := &api.MigrationReport{}
	var reason string
	for _, tr := range ar.tasks {
		cp := tr.caps.Checkpoint
		ok := cp != nil
		if !ok || !cp.CanCheckpoint() {
			reason = fmt.Sprintf("task %s: its driver cannot checkpoint", tr.cfg.Name)
			break
		}
		ck, err := cp.CheckpointTask(a.ctx, tr.cfg.ID, filepath.Join(tr.cfg.TaskDir, "checkpoint"), true)
		if err != nil {
			reason = fmt.Sprintf("task %s: %v", tr.cfg.Name, err)
			break
		}
		rep.CheckpointBytes += ck.Bytes
		rep.CheckpointMs += millis(ck.Duration)
	}
	rep.DowntimeMs = rep.CheckpointMs
	ar.log.Info("checkpoint ended", "migration", m.ID, "bytes", rep.CheckpointBytes, "ms", rep.CheckpointMs, "failure", reason)
	if _, err := a.report(ar.id(), &api.MigrationOutcomeRequest{MigrationID: m.ID, Op: api.MigrationOpDone, Reason: reason, Report: rep}); err != nil {
		ar.log.Error("report checkpoint", "migration", m.ID, "err", err)
	}
}

// migrate moves the allocation's tasks to the migration's target: dump
// them (they stop), send the image, and let the target restore and
// commit. Whatever does not end committed is aborted through the server,
// which arbitrates between this abort and the target's commit; only then
// are the tasks restored here. So the tasks never run in two places, and
// an allocation is never left running nowhere (docs/migration.md).
func (ar *allocRunner) migrate(m *api.Migration) {
	a := ar.agent
	holds := make([]*migrationHold, len(ar.tasks))
	for i, tr := range ar.tasks {
		holds[i] = tr.holds.hold(m.ID)
	}
	decide := func(v holdVerdict, dirs map[string]string) {
		for i, tr := range ar.tasks {
			holds[i].decide(v, dirs[tr.cfg.Name])
		}
	}
	if why := ar.cannotCheckpoint(); why != "" {
		ar.fallback(m, why, holds)
		return
	}
	// An image is at most the tasks' memory: their limits bound it.
	var need int64
	for _, tr := range ar.tasks {
		need += tr.cfg.Resources.MemoryBytes
	}
	store := a.pickImageStore(need)
	rep := &api.MigrationReport{ImageStore: store.kind, PreCopy: a.noPreCopy}
	frozen := time.Now()
	dirs := map[string]string{}
	for _, tr := range ar.tasks {
		cp := tr.caps.Checkpoint
		ck, err := cp.CheckpointTask(a.ctx, tr.cfg.ID, store.sourceDir(ar.id(), tr.cfg.Name, tr.cfg.TaskDir, m.ID), false)
		if err != nil {
			// The tasks dumped so far have ended; the others still run.
			ar.fallback(m, fmt.Sprintf("checkpoint of task %s failed: %v", tr.cfg.Name, err), holds)
			a.removeTmpfsImages(ar.id())
			return
		}
		dirs[tr.cfg.Name] = ck.Dir
		rep.CheckpointBytes += ck.Bytes
	}
	rep.CheckpointMs = millis(time.Since(frozen))
	ar.log.Info("tasks checkpointed for migration", "migration", m.ID, "target", m.TargetNodeName, "bytes", rep.CheckpointBytes, "ms", rep.CheckpointMs, "image_store", store.kind)

	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeImageTar(pw, dirs)) }()
	offer := ImageOffer{AllocID: ar.id(), MigrationID: m.ID, Token: m.Token, CheckpointBytes: rep.CheckpointBytes, CheckpointMs: rep.CheckpointMs}
	sendCtx, cancel := context.WithTimeout(a.ctx, receiveTimeout+time.Minute)
	receipt, err := a.cfg.Transport.Send(sendCtx, m.TargetAddr, offer, pr)
	cancel()
	pr.Close()
	outcome, reason := "", ""
	if err != nil {
		reason = "send image: " + err.Error()
	} else {
		outcome, reason = receipt.Outcome, receipt.Reason
		rep.TransferMs, rep.RestoreMs, rep.CommitMs = receipt.TransferMs, receipt.RestoreMs, receipt.CommitMs
	}
	if outcome != api.MigrationCommitted {
		// The server decides: the target may have committed after all.
		if reason == "" {
			reason = "the target did not restore the tasks"
		}
		resp, err := a.report(ar.id(), &api.MigrationOutcomeRequest{MigrationID: m.ID, Op: api.MigrationOpAbort, Reason: reason})
		if err != nil {
			// Nobody knows: keep the tasks held (stopped) rather than
			// risk two copies; a restarted agent settles it.
			ar.log.Error("migration outcome unknown; tasks stay stopped until the agent can reach a server", "migration", m.ID, "err", err)
			return
		}
		outcome = resp.Outcome
		if resp.Reason != "" {
			reason = resp.Reason
		}
	}
	if outcome == api.MigrationCommitted {
		decide(holdGone, nil)
		rep.DowntimeMs = millis(time.Since(frozen))
		ar.log.Info("migration committed", "migration", m.ID, "target", m.TargetNodeName, "downtime_ms", rep.DowntimeMs)
		ar.wait()
		a.drop(ar)
	} else {
		decide(holdRestore, dirs)
		for _, h := range holds {
			<-h.settled
		}
		rep.DowntimeMs = millis(time.Since(frozen))
		ar.log.Warn("migration aborted; tasks restored here", "migration", m.ID, "reason", reason, "downtime_ms", rep.DowntimeMs)
		for _, dir := range dirs {
			os.RemoveAll(dir)
		}
	}
	// Not when the outcome is unknown (above): a restarted agent restores
	// the tasks from these images.
	a.removeTmpfsImages(ar.id())
	if _, err := a.report(ar.id(), &api.MigrationOutcomeRequest{MigrationID: m.ID, Op: api.MigrationOpReport, Report: rep}); err != nil {
		ar.log.Warn("report migration figures", "migration", m.ID, "err", err)
	}
}

// cannotCheckpoint says why the allocation's tasks cannot be dumped here:
// said before any task is frozen, so that a move that cannot keep memory
// stops and restarts at once.
func (ar *allocRunner) cannotCheckpoint() string {
	ck := ar.agent.Node().Checkpoint
	var why []string
	for _, tr := range ar.tasks {
		cp := tr.caps.Checkpoint
		ok := cp != nil
		switch {
		case !ok || !cp.CanCheckpoint():
			why = append(why, fmt.Sprintf("task %s: its driver cannot checkpoint on this node", tr.cfg.Name))
		case tr.dead():
			why = append(why, fmt.Sprintf("task %s has ended", tr.cfg.Name))
		case ck != nil && !ck.KeepsMemoryOfTask(tr.cfg.Task, &api.TaskState{RunsAs: tr.snapshot().RunsAs}):
			why = append(why, fmt.Sprintf("task %s runs as user %q and criu dumps root's tasks only here: %s", tr.cfg.Name, tr.cfg.Task.User, ck.Limit))
		}
	}
	return strings.Join(why, "; ")
}

// fallback moves the allocation without its memory: it stops the tasks
// here (held, so they are not restarted), then commits the move with the
// reason; the target starts them afresh when it sees the allocation. If
// the move cannot be committed, the tasks start afresh here.
func (ar *allocRunner) fallback(m *api.Migration, why string, holds []*migrationHold) {
	a := ar.agent
	ar.log.Warn("cannot checkpoint; moving by stop and restart", "migration", m.ID, "reason", why)
	for _, tr := range ar.tasks {
		if tr.dead() {
			continue
		}
		timeout := tr.cfg.Task.KillTimeout
		if timeout <= 0 {
			timeout = defaultKillTimeout
		}
		if err := tr.driver.StopTask(tr.cfg.ID, timeout); err != nil {
			ar.log.Error("stop for fallback migration", "task", tr.cfg.Name, "err", err)
		}
	}
	resp, err := a.report(ar.id(), &api.MigrationOutcomeRequest{MigrationID: m.ID, Op: api.MigrationOpCommit, Fallback: true,
		Reason: "cannot checkpoint: " + why})
	verdict := holdRestart
	if err != nil {
		ar.log.Error("fallback migration outcome unknown; tasks stay stopped until the agent can reach a server", "migration", m.ID, "err", err)
		return
	}
	if resp.Outcome == api.MigrationCommitted {
		verdict = holdGone
	} else if resp.Outcome == "" {
		// The commit was refused (no room on the target): abort, then
		// start here again.
		if r2, err := a.report(ar.id(), &api.MigrationOutcomeRequest{MigrationID: m.ID, Op: api.MigrationOpAbort, Reason: resp.Reason}); err == nil && r2.Outcome == api.MigrationCommitted {
			verdict = holdGone
		}
	}
	for _, h := range holds {
		h.decide(verdict, "")
	}
	if verdict == holdGone {
		ar.wait()
		a.drop(ar)
	}
}

// settleMigrationAtStart settles a move this node was the source of when
// its previous agent process ended: the server's abort decides whether the
// allocation moved (its record is dropped) or stays; then, if its tasks
// were dumped, they are restored from the image when their runner finds
// them gone. It reports whether the record should be dropped.
func (a *Agent) settleMigrationAtStart(ar *allocRunner) (drop bool) {
	m := ar.allocation().Migration
	if !m.Active() || m.Kind != api.MigrationMove || m.SourceNode != a.nodeID {
		return false
	}
	resp, err := a.report(ar.id(), &api.MigrationOutcomeRequest{MigrationID: m.ID, Op: api.MigrationOpAbort,
		Reason: "the source agent restarted during the migration"})
	if err != nil {
		a.log.Error("cannot settle the migration left by the previous agent; its tasks are left as they are", "alloc", ar.id(), "migration", m.ID, "err", err)
		return false
	}
	if resp.Outcome == api.MigrationCommitted {
		a.log.Info("allocation moved while the agent was down", "alloc", ar.id(), "migration", m.ID)
		return true
	}
	for _, tr := range ar.tasks {
		tr.mu.Lock()
		h := tr.handle
		tr.mu.Unlock()
		if h != nil && h.PID > 0 && syscall.Kill(h.PID, 0) == nil {
			continue // never dumped (or dumped leaving it running): it runs on
		}
		for _, dir := range a.sourceImageDirs(ar.id(), tr.cfg.Name, tr.cfg.TaskDir, m.ID) {
			if _, err := os.Stat(filepath.Join(dir, "inventory.img")); err == nil {
				tr.holds.hold(m.ID).decide(holdRestore, dir)
				break
			}
		}
	}
	return false
}
