package exec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
)

// An agent that lost its records (its data dir deleted, its database
// replaced) would leave the tasks, shims and cgroups of its earlier life
// running for good. At start it asks the driver for them: FindOrphans sees
// the host, StopOrphan ends one, and RecoverTask adopts one (its Handle).

// Orphan is a task of this driver on the host that the agent has no record
// of (drivers.Orphan).
type Orphan = drivers.Orphan

// FindOrphans lists the tasks whose cgroup lies under the driver's parent,
// or whose shim runs a task directory under allocsDir, for which known
// returns false. The shims are found by their command line (`__shim
// <allocsDir>/<alloc>/<task>`), so several agents on one host, each with
// its own data dir and cgroup parent, never see each other's tasks.
func (d *Driver) FindOrphans(allocsDir string, known func(allocID, task string) bool) ([]Orphan, error) {
	refs, err := cgroup.ListTasks(d.version, d.cfg.CgroupRoot, d.cfg.CgroupParent)
	if err != nil {
		return nil, err
	}
	shims, err := findShims(allocsDir)
	if err != nil {
		return nil, err
	}
	found := map[cgroup.TaskRef]bool{}
	for _, ref := range refs {
		found[ref] = true
	}
	for ref := range shims {
		found[ref] = true
	}
	var out []Orphan
	for ref := range found {
		if ref.Task == "" {
			if !known(ref.AllocID, "") {
				out = append(out, Orphan{AllocID: ref.AllocID, Handle: drivers.TaskHandle{Driver: Name, Cgroup: ref.Rel(d.cfg.CgroupParent)}})
			}
			continue
		}
		if known(ref.AllocID, ref.Task) {
			continue
		}
		o, err := d.describeOrphan(allocsDir, ref, shims[ref])
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out, nil
}

func (d *Driver) describeOrphan(allocsDir string, ref cgroup.TaskRef, shimPID int) (Orphan, error) {
	rel := ref.Rel(d.cfg.CgroupParent)
	group, err := cgroup.Open(d.version, d.cfg.CgroupRoot, rel)
	if err != nil {
		return Orphan{}, err
	}
	pids, err := group.Procs()
	if err != nil {
		return Orphan{}, err
	}
	o := Orphan{AllocID: ref.AllocID, Task: ref.Task, PIDs: pids, Handle: drivers.TaskHandle{
		ID: ref.AllocID + "/" + ref.Task, Driver: Name, TaskDir: filepath.Join(allocsDir, ref.AllocID, ref.Task),
		Cgroup: rel, Cgroups: group.Dirs(), StartedAt: time.Now(),
	}}
	if shimPID > 0 {
		if start, alive := taskfile.ProcStart(shimPID); alive {
			o.ShimAlive = true
			o.Handle.ShimPID, o.Handle.ShimStart = shimPID, start
		}
	}
	// run.json names the task and its init when the task directory
	// survived; otherwise /proc does (a lost data dir).
	var info runInfo
	if ok, _ := taskfile.ReadJSON(filepath.Join(o.Handle.TaskDir, runFile), &info); ok && info.PID > 0 {
		o.Handle.PID, o.Handle.InitPID, o.Handle.StartedAt = info.PID, info.InitPID, info.StartedAt
	}
	if o.Handle.PID == 0 && o.ShimAlive {
		o.Handle.PID, o.Handle.InitPID = findTask(shimPID, pids)
	}
	return o, nil
}

// findTask finds a live shim's task among the processes of the task's
// cgroup, and the init of the task's pid namespace: the shim's only child
// is the init, in a pid namespace of its own (and, since the init joins the
// task's cgroups itself, in the cgroup too), and the task is the init's
// first child in the cgroup (processes orphaned inside the namespace are
// re-parented to the init too, but started later). A shim from before
// namespaces, or of a checkpointable task, has the task itself as its
// child, in the shim's pid namespace; its init is 0. Both are 0 when the
// task is not found.
func findTask(shimPID int, cgroupPIDs []int) (pid, initPID int) {
	inCgroup := map[int]bool{}
	for _, p := range cgroupPIDs {
		inCgroup[p] = true
	}
	shimNS := pidNamespace(shimPID)
	for _, child := range procChildren(shimPID) {
		if inCgroup[child] && (shimNS == "" || pidNamespace(child) == shimNS) {
			return child, 0
		}
		var first uint64
		for _, p := range procChildren(child) {
			start, alive := taskfile.ProcStart(p)
			if !inCgroup[p] || !alive {
				continue
			}
			if pid == 0 || start < first || start == first && p < pid {
				pid, first = p, start
			}
		}
		if pid > 0 {
			return pid, child
		}
	}
	return 0, 0
}

// pidNamespace names pid's pid namespace ("pid:[4026531836]"); "" when
// it cannot be read.
func pidNamespace(pid int) string {
	ns, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns", "pid"))
	return ns
}

// procChildren lists pid's children; any of its threads may have forked
// one, so every thread's list is read.
func procChildren(pid int) []int {
	threads, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range threads {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(data)) {
			if child, err := strconv.Atoi(field); err == nil {
				out = append(out, child)
			}
		}
	}
	return out
}

// findShims maps each task directory under allocsDir that a live shim runs
// to the shim's pid.
func findShims(allocsDir string) (map[cgroup.TaskRef]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	prefix := filepath.Clean(allocsDir) + string(filepath.Separator)
	out := map[cgroup.TaskRef]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone meanwhile, or not ours to read
		}
		args := strings.Split(string(bytes.TrimRight(data, "\x00")), "\x00")
		if len(args) < 3 || args[len(args)-2] != "__shim" || !strings.HasPrefix(args[len(args)-1], prefix) {
			continue
		}
		parts := strings.Split(strings.TrimPrefix(args[len(args)-1], prefix), string(filepath.Separator))
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			continue
		}
		if _, alive := taskfile.ProcStart(pid); alive {
			out[cgroup.TaskRef{AllocID: parts[0], Task: parts[1]}] = pid
		}
	}
	return out, nil
}

// StopOrphan ends an orphan for good: SIGTERM to every process of its
// cgroup, SIGKILL to what is left after grace, then its shim, then its
// cgroup directories (every v1 controller, or the v2 one) are removed.
func (d *Driver) StopOrphan(o Orphan, grace time.Duration) error {
	group, err := cgroup.Open(d.version, d.cfg.CgroupRoot, o.Handle.Cgroup)
	if err != nil {
		return err
	}
	pids, err := group.Procs()
	if err != nil {
		return fmt.Errorf("stop orphan %s: %w", o.ID(), err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("stop orphan %s: signal %d: %w", o.ID(), pid, err)
		}
	}
	deadline := time.Now().Add(grace)
	for len(pids) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if pids, err = group.Procs(); err != nil {
			return fmt.Errorf("stop orphan %s: %w", o.ID(), err)
		}
	}
	if err := group.Kill(10 * time.Second); err != nil {
		return fmt.Errorf("stop orphan %s: %w", o.ID(), err)
	}
	if o.ShimAlive {
		// The shim catches SIGTERM by design; once its task is dead it
		// writes its result and exits by itself, within copyGrace.
		deadline := time.Now().Add(copyGrace + time.Second)
		for taskfile.SameProcess(o.Handle.ShimPID, o.Handle.ShimStart) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if taskfile.SameProcess(o.Handle.ShimPID, o.Handle.ShimStart) {
			if err := syscall.Kill(o.Handle.ShimPID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("stop orphan %s: kill shim %d: %w", o.ID(), o.Handle.ShimPID, err)
			}
		}
	}
	if err := group.Remove(); err != nil {
		return fmt.Errorf("stop orphan %s: %w", o.ID(), err)
	}
	return nil
}
