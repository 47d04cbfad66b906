package migrate

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

// defaultKillTimeout is the SIGTERM grace of a fallback's stop when the
// task sets none (the agent's default).
const defaultKillTimeout = 5 * time.Second

// Checkpoint writes a checkpoint of every task of a, leaving them
// running, into <task dir>/checkpoint (the previous one is replaced), and
// reports it.
func (m *Migrator) Checkpoint(ctx context.Context, a Alloc, mig *api.Migration) {
	rep := &api.MigrationReport{}
	var reason string
	for _, t := range a.Tasks() {
		cfg := t.Config()
		cp := t.Driver().Checkpoint
		if cp == nil || !cp.CanCheckpoint() {
			reason = fmt.Sprintf("task %s: its driver cannot checkpoint", cfg.Name)
			break
		}
		ck, err := cp.CheckpointTask(ctx, cfg.ID, filepath.Join(cfg.TaskDir, "checkpoint"), true)
		if err != nil {
			reason = fmt.Sprintf("task %s: %v", cfg.Name, err)
			break
		}
		rep.CheckpointBytes += ck.Bytes
		rep.CheckpointMs += millis(ck.Duration)
	}
	rep.DowntimeMs = rep.CheckpointMs
	a.Log().Info("checkpoint ended", "migration", mig.ID, "bytes", rep.CheckpointBytes, "ms", rep.CheckpointMs, "failure", reason)
	if _, err := m.report(ctx, a.ID(), &api.MigrationOutcomeRequest{MigrationID: mig.ID, Op: api.MigrationOpDone, Reason: reason, Report: rep}); err != nil {
		a.Log().Error("report checkpoint", "migration", mig.ID, "err", err)
	}
}

// Move moves a's tasks to the migration's target: dump them (they stop),
// send the image, and let the target restore and commit. Whatever does
// not end committed is aborted through the servers, which arbitrate
// between this abort and the target's commit; only then are the tasks
// restored here. So the tasks never run in two places, and an allocation
// is never left running nowhere (docs/migration.md). It reports true when
// the allocation now runs on the target (by memory or by a fallback): the
// caller drops its runner once its tasks ended (Alloc.Wait).
func (m *Migrator) Move(ctx context.Context, a Alloc, mig *api.Migration) (moved bool) {
	tasks := a.Tasks()
	holds := make([]*Hold, len(tasks))
	for i, t := range tasks {
		holds[i] = t.Holds().Hold(mig.ID)
	}
	decide := func(v Verdict, dirs map[string]string) {
		for i, t := range tasks {
			holds[i].Decide(v, dirs[t.Config().Name])
		}
	}
	if why := m.cannotCheckpoint(tasks); why != "" {
		return m.fallback(ctx, a, mig, why, holds)
	}
	// An image is at most the tasks' memory: their limits bound it.
	var need int64
	for _, t := range tasks {
		need += t.Config().Resources.MemoryBytes
	}
	store := m.cfg.Images.pickImageStore(need)
	rep := &api.MigrationReport{ImageStore: store.kind, PreCopy: m.cfg.NoPreCopy}
	frozen := time.Now()
	dirs := map[string]string{}
	for _, t := range tasks {
		cfg := t.Config()
		ck, err := t.Driver().Checkpoint.CheckpointTask(ctx, cfg.ID, store.sourceDir(a.ID(), cfg.Name, cfg.TaskDir, mig.ID), false)
		if err != nil {
			// The tasks dumped so far have ended; the others still run.
			moved := m.fallback(ctx, a, mig, fmt.Sprintf("checkpoint of task %s failed: %v", cfg.Name, err), holds)
			m.cfg.Images.Remove(a.ID())
			return moved
		}
		dirs[cfg.Name] = ck.Dir
		rep.CheckpointBytes += ck.Bytes
	}
	rep.CheckpointMs = millis(time.Since(frozen))
	a.Log().Info("tasks checkpointed for migration", "migration", mig.ID, "target", mig.TargetNodeName, "bytes", rep.CheckpointBytes, "ms", rep.CheckpointMs, "image_store", store.kind)

	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeImageTar(pw, dirs)) }()
	offer := ImageOffer{AllocID: a.ID(), MigrationID: mig.ID, Token: mig.Token, CheckpointBytes: rep.CheckpointBytes, CheckpointMs: rep.CheckpointMs}
	sendCtx, cancel := context.WithTimeout(ctx, receiveTimeout+time.Minute)
	receipt, err := m.cfg.Transport.Send(sendCtx, mig.TargetAddr, offer, pr)
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
		// The servers decide: the target may have committed after all.
		if reason == "" {
			reason = "the target did not restore the tasks"
		}
		resp, err := m.report(ctx, a.ID(), &api.MigrationOutcomeRequest{MigrationID: mig.ID, Op: api.MigrationOpAbort, Reason: reason})
		if err != nil {
			// Nobody knows: keep the tasks held (stopped) rather than
			// risk two copies; a restarted agent settles it.
			a.Log().Error("migration outcome unknown; tasks stay stopped until the agent can reach a server", "migration", mig.ID, "err", err)
			return false
		}
		outcome = resp.Outcome
		if resp.Reason != "" {
			reason = resp.Reason
		}
	}
	if outcome == api.MigrationCommitted {
		decide(Gone, nil)
		rep.DowntimeMs = millis(time.Since(frozen))
		a.Log().Info("migration committed", "migration", mig.ID, "target", mig.TargetNodeName, "downtime_ms", rep.DowntimeMs)
		moved = true
	} else {
		decide(Restore, dirs)
		for _, h := range holds {
			<-h.settled
		}
		rep.DowntimeMs = millis(time.Since(frozen))
		a.Log().Warn("migration aborted; tasks restored here", "migration", mig.ID, "reason", reason, "downtime_ms", rep.DowntimeMs)
		for _, dir := range dirs {
			os.RemoveAll(dir)
		}
	}
	// Not when the outcome is unknown (above): a restarted agent restores
	// the tasks from these images.
	m.cfg.Images.Remove(a.ID())
	if _, err := m.report(ctx, a.ID(), &api.MigrationOutcomeRequest{MigrationID: mig.ID, Op: api.MigrationOpReport, Report: rep}); err != nil {
		a.Log().Warn("report migration figures", "migration", mig.ID, "err", err)
	}
	return moved
}

// cannotCheckpoint says why tasks cannot be dumped here: said before any
// task is frozen, so that a move that cannot keep memory stops and
// restarts at once.
func (m *Migrator) cannotCheckpoint(tasks []Task) string {
	ck := m.cfg.Checkpoint
	var why []string
	for _, t := range tasks {
		cfg := t.Config()
		cp := t.Driver().Checkpoint
		st := t.State()
		switch {
		case cp == nil || !cp.CanCheckpoint():
			why = append(why, fmt.Sprintf("task %s: its driver cannot checkpoint on this node", cfg.Name))
		case st.State == api.TaskDead:
			why = append(why, fmt.Sprintf("task %s has ended", cfg.Name))
		case ck != nil && !ck.KeepsMemoryOfTask(cfg.Task, &st):
			why = append(why, fmt.Sprintf("task %s runs as user %q and criu dumps root's tasks only here: %s", cfg.Name, cfg.Task.User, ck.Limit))
		}
	}
	return strings.Join(why, "; ")
}

// fallback moves the allocation without its memory: it stops the tasks
// here (held, so they are not restarted), then commits the move with the
// reason; the target starts them afresh when it sees the allocation. If
// the move cannot be committed, the tasks start afresh here. It reports
// whether the allocation moved.
func (m *Migrator) fallback(ctx context.Context, a Alloc, mig *api.Migration, why string, holds []*Hold) bool {
	a.Log().Warn("cannot checkpoint; moving by stop and restart", "migration", mig.ID, "reason", why)
	for _, t := range a.Tasks() {
		cfg := t.Config()
		if t.State().State == api.TaskDead {
			continue
		}
		timeout := cfg.Task.KillTimeout
		if timeout <= 0 {
			timeout = defaultKillTimeout
		}
		if err := t.Driver().Driver.StopTask(cfg.ID, timeout); err != nil {
			a.Log().Error("stop for fallback migration", "task", cfg.Name, "err", err)
		}
	}
	resp, err := m.report(ctx, a.ID(), &api.MigrationOutcomeRequest{MigrationID: mig.ID, Op: api.MigrationOpCommit, Fallback: true,
		Reason: "cannot checkpoint: " + why})
	if err != nil {
		a.Log().Error("fallback migration outcome unknown; tasks stay stopped until the agent can reach a server", "migration", mig.ID, "err", err)
		return false
	}
	verdict := Restart
	if resp.Outcome == api.MigrationCommitted {
		verdict = Gone
	} else if resp.Outcome == "" {
		// The commit was refused (no room on the target): abort, then
		// start here again.
		if r2, err := m.report(ctx, a.ID(), &api.MigrationOutcomeRequest{MigrationID: mig.ID, Op: api.MigrationOpAbort, Reason: resp.Reason}); err == nil && r2.Outcome == api.MigrationCommitted {
			verdict = Gone
		}
	}
	for _, h := range holds {
		h.Decide(verdict, "")
	}
	return verdict == Gone
}

// SettleAtStart settles a move this node was the source of when its
// previous agent process ended: the servers' abort decides whether the
// allocation moved (true: the caller drops its record) or stays; then,
// if its tasks were dumped, they are restored from the image when their
// runners find them gone.
func (m *Migrator) SettleAtStart(ctx context.Context, a Alloc, mig *api.Migration) (moved bool) {
	if !mig.Active() || mig.Kind != api.MigrationMove || mig.SourceNode != m.cfg.NodeID {
		return false
	}
	resp, err := m.report(ctx, a.ID(), &api.MigrationOutcomeRequest{MigrationID: mig.ID, Op: api.MigrationOpAbort,
		Reason: "the source agent restarted during the migration"})
	if err != nil {
		a.Log().Error("cannot settle the migration left by the previous agent; its tasks are left as they are", "migration", mig.ID, "err", err)
		return false
	}
	if resp.Outcome == api.MigrationCommitted {
		a.Log().Info("allocation moved while the agent was down", "migration", mig.ID)
		return true
	}
	for _, t := range a.Tasks() {
		cfg := t.Config()
		if h := t.Handle(); h != nil && h.PID > 0 && syscall.Kill(h.PID, 0) == nil {
			continue // never dumped (or dumped leaving it running): it runs on
		}
		for _, dir := range m.cfg.Images.sourceImageDirs(a.ID(), cfg.Name, cfg.TaskDir, mig.ID) {
			if _, err := os.Stat(filepath.Join(dir, "inventory.img")); err == nil {
				t.Holds().Hold(mig.ID).Decide(Restore, dir)
				break
			}
		}
	}
	return false
}
