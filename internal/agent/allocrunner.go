package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/health"
	"github.com/strata-dev/strata/internal/agent/state"
	"github.com/strata-dev/strata/internal/spec"
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
// from before an agent restart.
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
		taskDir := filepath.Join(ar.dir, task.Name)
		if err := os.MkdirAll(taskDir, 0o755); err != nil {
			return nil, fmt.Errorf("alloc %s: %w", alloc.ID, err)
		}
		name := task.Driver
		if name == "" {
			name = "exec"
		}
		driver, ok := a.drivers[name]
		if !ok {
			driver = unavailableDriver{name: name, err: a.driverErrs[name]}
		}
		var taskRec *state.TaskRecord
		if rec != nil {
			taskRec = rec.Tasks[task.Name]
		}
		cfg := drivers.TaskConfig{
			ID: alloc.ID + "/" + task.Name, AllocID: alloc.ID, Name: task.Name,
			Task: task, Env: a.taskEnv(alloc, task, taskDir), TaskDir: taskDir,
			Resources: task.Resources,
			CPUs:      alloc.Assignment.CPUs, NUMANode: alloc.Assignment.NUMANode,
			GPUs:        alloc.Assignment.GPUs,
			LogMaxBytes: a.cfg.LogMaxBytes, LogMaxFiles: a.cfg.LogMaxFiles,
		}
		if !alloc.AllowRootTasks {
			cfg.RootVeto = fmt.Sprintf("namespace %q does not allow root tasks (a cell manager sets allowRootTasks on it)", api.NamespaceOf(alloc.Namespace))
		}
		cfg.Devices, cfg.DenyDevices = a.devNodes.forTask(alloc.Assignment.GPUs, perTask[task.Name])
		deviceEnv(cfg.Env, a.node, perTask[task.Name])
		if len(cfg.CPUs) == 0 {
			cfg.NUMANode = -1
		}
		mems, err := taskMems(a.node.NUMA, alloc.Assignment, task)
		if err != nil {
			driver = refusedDriver{err: err}
		}
		cfg.Mems = mems
		tr := newTaskRunner(cfg, driver, alloc.TaskGroup.RestartPolicy, ar.log, taskRec)
		tr.changed = ar.taskChanged
		tr.beforeStart = a.syncSharedCores
		if ids := perTask[task.Name]; len(ids) > 0 {
			tr.devicesPresent = func() error { return a.devNodes.present(ids) }
		}
		if _, fenced := a.lease.fence(alloc.TaskGroup); fenced {
			tr.fence = &fenceGate{keeper: a.lease, group: alloc.TaskGroup}
			tr.cfg.Fenced = true
		}
		ar.tasks = append(ar.tasks, tr)
	}
	ar.newHealth()
	return ar, nil
}

// taskEnv is the task's environment: Task.Env over the STRATA_* variables.
func (a *Agent) taskEnv(alloc *api.Allocation, task *api.Task, taskDir string) map[string]string {
	env := map[string]string{
		"STRATA_ALLOC_ID":  alloc.ID,
		"STRATA_WORKLOAD":  alloc.Workload,
		"STRATA_GROUP":     alloc.Group,
		"STRATA_TASK_NAME": task.Name,
		"STRATA_TASK_DIR":  taskDir,
		"STRATA_NODE_ID":   a.nodeID,
	}
	for _, p := range alloc.Assignment.Ports {
		env[spec.PortEnv(p.Name)] = strconv.Itoa(p.Port)
	}
	if len(alloc.Assignment.GPUs) > 0 {
		env["CUDA_VISIBLE_DEVICES"] = strings.Join(alloc.Assignment.GPUs, ",")
		env["NVIDIA_VISIBLE_DEVICES"] = env["CUDA_VISIBLE_DEVICES"]
	}
	for k, v := range task.Env {
		env[k] = v
	}
	return env
}

func (ar *allocRunner) id() string { return ar.allocation().ID }

func (ar *allocRunner) allocation() *api.Allocation {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return ar.alloc
}

func (ar *allocRunner) setAllocation(alloc *api.Allocation) {
	ar.mu.Lock()
	ar.alloc = alloc
	ar.mu.Unlock()
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

func (ar *allocRunner) persist() {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if ar.forgotten {
		return // deleted from the database; do not bring it back
	}
	status, reason, _ := ar.status()
	rec := &state.AllocRecord{Alloc: ar.alloc, ClientStatus: status, ClientReason: reason, Tasks: map[string]*state.TaskRecord{}}
	for _, tr := range ar.tasks {
		rec.Tasks[tr.cfg.Name] = tr.record()
	}
	if err := ar.agent.db.PutAlloc(rec); err != nil {
		ar.log.Error("persist alloc state", "err", err)
	}
}

// unavailableDriver stands in for a driver the node does not have, so that
// the task fails with a reason instead of the agent refusing the allocation.
type unavailableDriver struct {
	name string
	err  error
}

var _ Driver = unavailableDriver{}

func (d unavailableDriver) StartTask(_ context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if d.err != nil {
		return nil, fmt.Errorf("driver %q unavailable on this node: %w", d.name, d.err)
	}
	return nil, fmt.Errorf("driver %q unavailable on this node", d.name)
}
func (d unavailableDriver) RecoverTask(*drivers.TaskHandle) error { return drivers.ErrTaskNotFound }
func (d unavailableDriver) WaitTask(context.Context, string) (*drivers.ExitResult, error) {
	return nil, drivers.ErrTaskNotFound
}
func (d unavailableDriver) StopTask(string, time.Duration) error { return nil }
func (d unavailableDriver) DestroyTask(string) error             { return nil }
