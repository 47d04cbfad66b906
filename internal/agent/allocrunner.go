package agent

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/health"
	"github.com/strata-dev/strata/internal/agent/state"
)

// allocRunner runs the tasks of one allocation and derives its client
// status from theirs. A task that fails for good stops its siblings, as a
// group lives and dies together.
type allocRunner struct {
	agent *Agent
	log   *slog.Logger
	dir   string

	tasks []*taskRunner // in TaskGroup order
	// health runs the allocation's checks (health.go); started tracks,
	// per task, the StartedAt its checks were last started for.
	health  *health.Runner
	started map[string]time.Time

	// persistMu orders the writes of the allocation's record (persist,
	// forgetRecord); it is taken with no other lock held.
	persistMu sync.Mutex

	mu        sync.Mutex
	alloc     *api.Allocation // the server's latest copy
	forgotten bool            // the server no longer lists it: being removed
	stopTold  bool            // the server told it to stop (stopWhenTold)
	// migrating is the migration this node runs as the source, if any;
	// migrationsSeen the ones it took up; incoming is set while this node
	// restored the tasks as a migration's target and waits for the commit.
	migrating      string
	migrationsSeen map[string]bool
	incoming       bool
}

// newAllocRunner builds the runner of alloc; rec, when set, is its state
// from before an agent restart. It touches nothing on disk (see
// prepare).
func (a *Agent) newAllocRunner(alloc *api.Allocation, rec *state.AllocRecord) (*allocRunner, error) {
	if alloc.TaskGroup == nil || len(alloc.TaskGroup.Tasks) == 0 {
		return nil, fmt.Errorf("alloc %s: no tasks", alloc.ID)
	}
	ar := &allocRunner{
		agent: a,
		alloc: alloc,
		dir:   filepath.Join(a.cfg.DataDir, "allocs", alloc.ID),
		log:   a.log.With("alloc", alloc.ID, "workload", alloc.Workload, "group", alloc.Group),
	}
	perTask := taskDevices(alloc)
	for _, task := range alloc.TaskGroup.Tasks {
		name := task.Driver
		if name == "" {
			name = "exec"
		}
		var taskRec *state.TaskRecord
		if rec != nil {
			taskRec = rec.Tasks[task.Name]
		}
		cfg := a.taskConfigFor(alloc, task, a.taskDir(alloc.ID, task.Name), perTask[task.Name])
		tr := newTaskRunner(cfg, a.drivers.For(name), alloc.TaskGroup.RestartPolicy, ar.log, taskRec)
		tr.changed = ar.taskChanged
		tr.hooks = a.taskHooksFor(ar, tr, alloc, task, perTask[task.Name])
		tr.oomKilled = a.oomKills.WithLabelValues(alloc.Workload, task.Name).Inc
		ar.tasks = append(ar.tasks, tr)
	}
	ar.newHealth()
	return ar, nil
}

// prepare makes the allocation's task directories. It runs before the
// runner's first start, outside the agent's lock (lock order: agent.go).
func (ar *allocRunner) prepare() error {
	for _, tr := range ar.tasks {
		if err := os.MkdirAll(tr.cfg.TaskDir, 0o755); err != nil {
			return fmt.Errorf("alloc %s: %w", ar.id(), err)
		}
	}
	return nil
}

func (ar *allocRunner) id() string { return ar.allocation().ID }

func (ar *allocRunner) allocation() *api.Allocation {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return ar.alloc
}

// setAllocation takes the server's latest copy of the allocation and
// runs the tasks' update hooks with it.
func (ar *allocRunner) setAllocation(alloc *api.Allocation) {
	ar.mu.Lock()
	ar.alloc = alloc
	ar.mu.Unlock()
	for _, tr := range ar.tasks {
		for _, h := range tr.hooks.update {
			h.update(alloc)
		}
	}
}

func (ar *allocRunner) task(name string) *taskRunner {
	for _, tr := range ar.tasks {
		if tr.cfg.Name == name {
			return tr
		}
	}
	return nil
}

// start runs every task runner; they return when a task dies for good or
// the agent's context ends.
func (ar *allocRunner) start() {
	for _, tr := range ar.tasks {
		ar.agent.wg.Add(1)
		go func() {
			defer ar.agent.wg.Done()
			tr.run(ar.agent.ctx)
		}()
	}
	ar.startHealth()
}

// stop asks every task to stop; it does not wait.
func (ar *allocRunner) stop() {
	for _, tr := range ar.tasks {
		tr.stop()
	}
}

// wait blocks until every task runner returned.
func (ar *allocRunner) wait() {
	for _, tr := range ar.tasks {
		<-tr.doneCh
	}
}

func (ar *allocRunner) taskChanged(tr *taskRunner) {
	st := tr.snapshot()
	if st.State == api.TaskDead && st.Failed {
		ar.stop() // the group failed: its other tasks must not run on
	}
	if st.State != api.TaskPending {
		// A shared task that just started takes the pool; a pinned
		// allocation whose last task died gives its cores back.
		ar.agent.syncSharedCores()
	}
	ar.followTask(tr.cfg.Name, st)
	ar.persist()
	ar.agent.markDirty(ar.id())
}

// status derives the allocation's client status from its tasks.
func (ar *allocRunner) status() (status, reason string, states map[string]*api.TaskState) {
	states = make(map[string]*api.TaskState, len(ar.tasks))
	allDead, anyStarted := true, false
	for _, tr := range ar.tasks {
		st := tr.snapshot()
		states[tr.cfg.Name] = &st
		if st.State != api.TaskDead {
			allDead = false
		}
		if st.State == api.TaskRunning || !st.StartedAt.IsZero() {
			anyStarted = true
		}
		if st.State == api.TaskDead && st.Failed && reason == "" {
			reason = fmt.Sprintf("task %s: %s", tr.cfg.Name, st.Message)
			if st.Restarts > 0 {
				reason += fmt.Sprintf(" after %d restarts", st.Restarts)
			}
		}
	}
	switch {
	case reason != "":
		return api.AllocFailed, reason, states
	case allDead:
		return api.AllocComplete, "", states
	case anyStarted:
		return api.AllocRunning, "", states
	}
	return api.AllocPending, "", states
}

// update is the report for the server.
func (ar *allocRunner) update() *api.AllocUpdate {
	status, reason, states := ar.status()
	u := &api.AllocUpdate{ID: ar.id(), ClientStatus: status, ClientReason: reason, TaskStates: states}
	if status == api.AllocRunning || status == api.AllocPending {
		u.Health = ar.health.Health()
	}
	return u
}

// persist writes the allocation's record: built under ar.mu, written
// without it (persistMu keeps the writes in order and out of the way of
// forgetRecord).
func (ar *allocRunner) persist() {
	ar.persistMu.Lock()
	defer ar.persistMu.Unlock()
	ar.mu.Lock()
	if ar.forgotten {
		ar.mu.Unlock()
		return // deleted from the database; do not bring it back
	}
	status, reason, _ := ar.status()
	rec := &state.AllocRecord{Alloc: ar.alloc, ClientStatus: status, ClientReason: reason, Tasks: map[string]*state.TaskRecord{}}
	for _, tr := range ar.tasks {
		rec.Tasks[tr.cfg.Name] = tr.record()
	}
	ar.mu.Unlock()
	if err := ar.agent.db.PutAlloc(rec); err != nil {
		ar.log.Error("persist alloc state", "err", err)
	}
}

// forgetRecord marks the runner forgotten and deletes its record; a
// persist that began before it cannot write the record back.
func (ar *allocRunner) forgetRecord() error {
	ar.persistMu.Lock()
	defer ar.persistMu.Unlock()
	ar.mu.Lock()
	ar.forgotten = true
	ar.mu.Unlock()
	return ar.agent.db.DeleteAlloc(ar.id())
}
