package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/exec"
	"github.com/strata-dev/strata/internal/agent/state"
)

// Host reconciliation (issue 7, defect 6). An agent whose records are gone
// (its data dir deleted, agent.db replaced) would leave the tasks, shims
// and cgroups of its earlier life running for good. At start it finds them
// (findOrphans) and keeps them as they are until the first allocation list
// of its cell: what that list still wants on this node is adopted, the
// same processes re-attached, and everything else is stopped and its
// cgroups removed (settleOrphans). Each is logged and becomes a node-agent
// event.
//
// At most once holds meanwhile (issue 18, defect 4): the cell may be out
// of reach, and replace an at-most-once copy elsewhere once the node's
// lease lapses. An orphan with a live shim is fenced by its shim: a lease
// file left behind is not renewed (only runners' fences are), and a
// missing one (the data dir lost) stops a fenced task at once. Processes
// that outlived their shim have nobody to fence them and can never be
// adopted: findOrphans stops them at once.

// orphanFinder is the exec driver's host reconciliation, when the node
// has the driver with it (drivers.OrphanFinder); nil otherwise: nothing
// of this agent's is on the host.
func (a *Agent) orphanFinder() drivers.OrphanFinder {
	if l := a.drivers.Get(exec.Name); l != nil {
		return l.Orphans
	}
	return nil
}

// findOrphans lists the exec tasks and cgroups of this agent that its
// records do not name. It runs once, after restore.
func (a *Agent) findOrphans() error {
	d := a.orphanFinder()
	if d == nil {
		return nil // no exec driver here, or a replacement: nothing of ours on the host
	}
	// What the records name, taken under a.mu; the host is read without it.
	a.mu.Lock()
	recorded := map[string]*allocRunner{}
	for id, ar := range a.allocs {
		recorded[id] = ar
	}
	a.mu.Unlock()
	known := func(allocID, task string) bool {
		ar, ok := recorded[allocID]
		return ok && (task == "" || ar.task(task) != nil)
	}
	orphans, err := d.FindOrphans(filepath.Join(a.cfg.DataDir, "allocs"), known)
	if err != nil {
		return fmt.Errorf("find orphaned tasks: %w", err)
	}
	if len(orphans) == 0 {
		return nil
	}
	a.orphans = map[string][]exec.Orphan{}
	shimless := map[string][]exec.Orphan{}
	for _, o := range orphans {
		if o.Task != "" && !o.ShimAlive && len(o.PIDs) > 0 {
			// Processes that outlived their shim: nothing enforces their
			// lease fence, and they can never be adopted (adoption needs
			// the shim). They are stopped now, before the agent hears from
			// its cell, which may be out of reach for a long while: a copy
			// of an at-most-once group may meanwhile be replaced
			// elsewhere (issue 18 defect 4).
			shimless[o.AllocID] = append(shimless[o.AllocID], o)
			a.log.Warn("found processes of an orphaned task without their shim; stopping them now", "alloc", o.AllocID, "task", o.Task,
				"procs", len(o.PIDs), "cgroup", o.Handle.Cgroup)
			continue
		}
		a.orphans[o.AllocID] = append(a.orphans[o.AllocID], o)
		a.log.Warn("found an orphaned task on the host, with no record of this agent; the cell's allocation list decides (its shim enforces its lease fence meanwhile)",
			"alloc", o.AllocID, "task", o.Task, "pid", o.Handle.PID, "shim_pid", o.Handle.ShimPID, "shim_alive", o.ShimAlive,
			"procs", len(o.PIDs), "cgroup", o.Handle.Cgroup)
	}
	for allocID, tasks := range shimless {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.stopOrphans(allocID, tasks, defaultKillTimeout)
		}()
	}
	return nil
}

// adoptOrphans returns the record under which a new runner of alloc
// re-attaches to its orphaned tasks, nil when it has none to adopt. a.mu is
// held (a.notice takes only the cell guard's lock). Orphans of alloc that cannot be adopted (a dead shim, a task the
// group does not have) are left to settleOrphans.
func (a *Agent) adoptOrphans(alloc *api.Allocation) *state.AllocRecord {
	orphans := a.orphans[alloc.ID]
	if len(orphans) == 0 || alloc.TaskGroup == nil {
		return nil
	}
	rec := &state.AllocRecord{Alloc: alloc, ClientStatus: api.AllocRunning, Tasks: map[string]*state.TaskRecord{}}
	var rest []exec.Orphan
	var adopted []string
	for _, o := range orphans {
		inGroup := slices.ContainsFunc(alloc.TaskGroup.Tasks, func(t *api.Task) bool {
			return t.Name == o.Task && (t.Driver == "" || t.Driver == exec.Name)
		})
		switch {
		case o.Task == "":
			// The allocation's own cgroup: its runner's tasks use it.
		case inGroup && o.ShimAlive && o.Handle.PID > 0:
			h := o.Handle
			rec.Tasks[o.Task] = &state.TaskRecord{
				State:  api.TaskState{State: api.TaskRunning, PID: h.PID, StartedAt: h.StartedAt},
				Handle: &h,
			}
			adopted = append(adopted, fmt.Sprintf("%s (pid %d)", o.Task, h.PID))
			a.log.Warn("adopting an orphaned task: the cell still wants it on this node", "alloc", alloc.ID, "task", o.Task,
				"pid", h.PID, "shim_pid", h.ShimPID)
		case inGroup:
			// Its shim is gone: the new task's start clears the cgroup.
		default:
			rest = append(rest, o)
		}
	}
	if len(rest) > 0 {
		a.orphans[alloc.ID] = rest
	} else {
		delete(a.orphans, alloc.ID)
	}
	if len(adopted) == 0 {
		return nil
	}
	a.notice(fmt.Sprintf("adopted allocation %s's tasks %s, found running with no record of this agent (lost data dir?): the cell still wants them here",
		alloc.ID, strings.Join(adopted, ", ")))
	return rec
}

// settleOrphans stops every orphan the first allocation list did not
// adopt, each allocation's tasks in parallel. a.mu is held.
func (a *Agent) settleOrphans(listed map[string]*api.Allocation) {
	for allocID, orphans := range a.orphans {
		grace := defaultKillTimeout
		if alloc := listed[allocID]; alloc != nil && alloc.TaskGroup != nil {
			for _, t := range alloc.TaskGroup.Tasks {
				grace = max(grace, t.KillTimeout)
			}
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.stopOrphans(allocID, orphans, grace)
		}()
	}
	a.orphans = nil
}

func (a *Agent) stopOrphans(allocID string, orphans []exec.Orphan, grace time.Duration) {
	d := a.orphanFinder()
	if d == nil {
		return
	}
	var stopped, failed []string
	for _, o := range orphans {
		what := o.Task
		if what == "" {
			what = "its empty cgroup"
		} else if o.Handle.PID > 0 {
			what = fmt.Sprintf("%s (pid %d)", o.Task, o.Handle.PID)
		}
		if err := d.StopOrphan(o, grace); err != nil {
			a.log.Error("stop orphaned task", "alloc", allocID, "task", o.Task, "err", err)
			failed = append(failed, fmt.Sprintf("%s: %v", what, err))
			continue
		}
		a.log.Warn("stopped an orphaned task the cell does not want on this node, and removed its cgroups",
			"alloc", allocID, "task", o.Task, "pid", o.Handle.PID, "shim_pid", o.Handle.ShimPID, "cgroup", o.Handle.Cgroup)
		stopped = append(stopped, what)
	}
	a.mu.Lock()
	_, running := a.allocs[allocID]
	a.mu.Unlock()
	if !running {
		os.RemoveAll(filepath.Join(a.cfg.DataDir, "allocs", allocID)) // what is left of its task dirs
	}
	msg := fmt.Sprintf("stopped allocation %s's orphaned %s, found with no record of this agent (lost data dir?): the cell does not want them here; their cgroups are removed",
		allocID, strings.Join(stopped, ", "))
	if len(failed) > 0 {
		msg = fmt.Sprintf("could not stop allocation %s's orphaned %s", allocID, strings.Join(failed, "; "))
	}
	a.notice(msg)
}
