package agent

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/exec"
	"github.com/strata-dev/strata/internal/agent/migrate"
)

// The agent's side of migrations (package migrate does the moving): it
// makes the node's Migrator, takes up the migrations the server's copies
// of its allocations carry, serves the target's route, and shows its
// runners to the migrator through the adapters below.

// ImageTransport carries migration images to other agents
// (migrate.ImageTransport).
type ImageTransport = migrate.ImageTransport

// MigrationAPI is what migrations need from the control plane beside
// ServerAPI (migrate.API); the API client has it.
type MigrationAPI = migrate.API

// probeCheckpoint finds what the node can checkpoint (migrate.ProbeNode),
// dumping a task of the default task user as a move would.
func (a *Agent) probeCheckpoint() migrate.Probe {
	uid, gid, err := exec.ResolveUser("")
	if err != nil {
		uid, gid = 65534, 65534
	}
	return migrate.ProbeNode(a.cfg.CriuPath, uid, gid, a.log)
}

// newMigrator makes the node's migrator once the node is fingerprinted.
func (a *Agent) newMigrator(probe migrate.Probe) {
	mapi, _ := a.cfg.API.(migrate.API)
	a.migrator = migrate.New(migrate.Config{
		NodeID: a.nodeID, NodeName: a.cfg.Name, API: mapi, Transport: a.cfg.Transport,
		Images:     migrate.Images{Dir: a.cfg.MigrateImageDir, DataDir: a.cfg.DataDir},
		Checkpoint: a.node.Checkpoint, NoPreCopy: probe.NoPreCopy,
		Backoff: retryBackoff, Log: a.log,
	})
}

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
	a := ar.agent
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer func() {
			ar.mu.Lock()
			ar.migrating = ""
			ar.mu.Unlock()
		}()
		if mc.Kind == api.MigrationCheckpoint {
			a.migrator.Checkpoint(a.ctx, migAlloc{ar}, &mc)
			return
		}
		if a.migrator.Move(a.ctx, migAlloc{ar}, &mc) {
			// It runs on the target: nothing is reported for it here.
			ar.wait()
			a.drop(ar)
		}
	}()
}

// migratingNow reports whether a migration of the allocation is in flight
// on this node (as source or, before its commit, as target).
func (ar *allocRunner) migratingNow() bool {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return ar.migrating != "" || ar.incoming
}

// settleMigrationAtStart settles a move this node was the source of when
// its previous agent process ended; it reports whether the allocation
// moved meanwhile (its record is dropped).
func (a *Agent) settleMigrationAtStart(ar *allocRunner) bool {
	return a.migrator.SettleAtStart(a.ctx, migAlloc{ar}, ar.allocation().Migration)
}

// handleReceiveImage is the target's route of a move
// (migrate.Migrator.Receive).
func (a *Agent) handleReceiveImage(w http.ResponseWriter, r *http.Request) {
	a.migrator.Receive(a.ctx, w, r, agentRunners{a})
}

// migAlloc is an allocation's runner as a migration sees it.
type migAlloc struct{ ar *allocRunner }

func (m migAlloc) ID() string        { return m.ar.id() }
func (m migAlloc) Dir() string       { return m.ar.dir }
func (m migAlloc) Log() *slog.Logger { return m.ar.log }
func (m migAlloc) Wait()             { m.ar.wait() }
func (m migAlloc) Tasks() []migrate.Task {
	out := make([]migrate.Task, len(m.ar.tasks))
	for i, tr := range m.ar.tasks {
		out[i] = migTask{tr}
	}
	return out
}

// migTask is a task runner as a migration, and its hold, see it.
type migTask struct{ tr *taskRunner }

var (
	_ migrate.Task       = migTask{}
	_ migrate.HoldTarget = migTask{}
	_ migrate.Incoming   = incomingAlloc{}
)

func (m migTask) Config() *drivers.TaskConfig { return &m.tr.cfg }
func (m migTask) Driver() *drivers.Loaded     { return m.tr.caps }
func (m migTask) State() api.TaskState        { return m.tr.snapshot() }
func (m migTask) Log() *slog.Logger           { return m.tr.log }
func (m migTask) Holds() *migrate.Holds       { return &m.tr.holds }
func (m migTask) Handle() *drivers.TaskHandle {
	m.tr.mu.Lock()
	defer m.tr.mu.Unlock()
	if m.tr.handle == nil {
		return nil
	}
	h := *m.tr.handle
	return &h
}

// Restored: the task runs again here under h (a restore after an aborted
// move).
func (m migTask) Restored(h *drivers.TaskHandle, message string) { m.tr.running(h, message) }

// Pending: the task ended with res and starts afresh.
func (m migTask) Pending(res *drivers.ExitResult, message string) {
	m.tr.update(func(s *api.TaskState) {
		setExit(s, res)
		s.State, s.Message = api.TaskPending, message
	})
}

// holdHook is the task runner's exited hook for its migration hold.
type holdHook struct{ holds *migrate.Holds }

func (h holdHook) exited(ctx context.Context, res *drivers.ExitResult, stop <-chan struct{}) exitVerdict {
	switch h.holds.Exited(ctx, res, stop) {
	case migrate.StartAfresh:
		return exitStartAfresh
	case migrate.Running:
		return exitRunning
	case migrate.MovedAway:
		return exitGone
	case migrate.Stopped:
		return exitStopped
	case migrate.AgentStopping:
		return exitAgentStopping
	}
	return exitNotClaimed
}

// agentRunners is the agent's runners as the target of a move sees them.
type agentRunners struct{ a *Agent }

func (r agentRunners) Has(allocID string) bool {
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	_, ok := r.a.allocs[allocID]
	return ok
}

func (r agentRunners) New(alloc *api.Allocation) (migrate.Incoming, error) {
	ar, err := r.a.newAllocRunner(alloc, nil)
	if err == nil {
		err = ar.prepare()
	}
	if err != nil {
		return nil, err
	}
	return incomingAlloc{migAlloc{ar}}, nil
}

// incomingAlloc is the runner of an allocation moving here.
type incomingAlloc struct{ migAlloc }

// Adopt makes tr the runner of a restored task: running, with the restart
// count it had on the source.
func (in incomingAlloc) Adopt(task migrate.Task, h *drivers.TaskHandle, was *api.TaskState) {
	tr := task.(migTask).tr
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

func (in incomingAlloc) Register() {
	ar := in.ar
	ar.mu.Lock()
	ar.incoming = true
	ar.mu.Unlock()
	ar.agent.mu.Lock()
	ar.agent.allocs[ar.id()] = ar
	ar.agent.mu.Unlock()
}

func (in incomingAlloc) Drop() {
	a, ar := in.ar.agent, in.ar
	a.mu.Lock()
	if a.allocs[ar.id()] == ar {
		delete(a.allocs, ar.id())
	}
	a.mu.Unlock()
}

func (in incomingAlloc) Commit() {
	ar := in.ar
	ar.mu.Lock()
	ar.incoming = false
	ar.mu.Unlock()
	ar.persist()
	ar.start()
	ar.agent.markDirty(ar.id())
}
