package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
)

// cpusetFile is the cpuset.cpus file of a task's cgroup on this host.
func cpusetFile(t *testing.T, ag *testAgent, allocID, task string) string {
	t.Helper()
	v, err := cgroup.Detect(cgroup.DefaultRoot)
	if err != nil {
		t.Skipf("no cgroups: %v", err)
	}
	rel := filepath.Join(ag.cfg.CgroupParent, allocID, task)
	if v == cgroup.V1 {
		return filepath.Join(cgroup.DefaultRoot, "cpuset", rel, "cpuset.cpus")
	}
	return filepath.Join(cgroup.DefaultRoot, rel, "cpuset.cpus.effective")
}

// TestExclusiveCoresLeaveSharedTasks reproduces the defect of issue 9: a
// task pinned to core 1 shared it with every ordinary task, whose cpuset
// stayed 0-1. While the pinned allocation runs, the shared task's cpuset
// must be the rest (0); once it stops, the whole machine again (0-1).
func TestExclusiveCoresLeaveSharedTasks(t *testing.T) {
	needCgroups(t)
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	if len(ag.Node().NUMA) == 0 || len(ag.Node().NUMA[0].CPUs) < 2 {
		t.Skip("needs a NUMA node with two cores")
	}
	all := cgroup.FormatCPUList(ag.Node().NUMA[0].CPUs)
	last := ag.Node().NUMA[0].CPUs[len(ag.Node().NUMA[0].CPUs)-1]
	rest := cgroup.FormatCPUList(ag.Node().NUMA[0].CPUs[:len(ag.Node().NUMA[0].CPUs)-1])

	shared := newAlloc(ag.NodeID()).task("shared", api.Resources{CPUMilli: 100, MemoryBytes: 32 << 20}, "sleep", "300").build()
	srv.put(shared)
	waitTask(t, srv, shared.ID, "shared", "shared task running", running)
	file := cpusetFile(t, ag, shared.ID, "shared")
	eventually(t, 5*time.Second, "shared cpuset is the whole node ("+all+")", func() bool { return readTrimOK(file) == all })

	pinned := newAlloc(ag.NodeID()).task("pinned", api.Resources{CPUMilli: 1000, MemoryBytes: 32 << 20}, "sleep", "300").build()
	pinned.Assignment = api.Assignment{CPUs: []int{last}, NUMANode: 0}
	srv.put(pinned)
	waitTask(t, srv, pinned.ID, "pinned", "pinned task running", running)
	if got := readTrimOK(cpusetFile(t, ag, pinned.ID, "pinned")); got != cgroup.FormatCPUList([]int{last}) {
		t.Errorf("pinned cpuset = %q, want %d", got, last)
	}
	eventually(t, 5*time.Second, "shared cpuset leaves the reserved core ("+rest+")", func() bool { return readTrimOK(file) == rest })

	srv.setDesired(pinned.ID, api.DesiredStop)
	waitTask(t, srv, pinned.ID, "pinned", "pinned task dead", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.State == api.TaskDead
	})
	eventually(t, 5*time.Second, "shared cpuset back to the whole node ("+all+")", func() bool { return readTrimOK(file) == all })
}

// readTrimOK reads a file, "" when it cannot be read.
func readTrimOK(path string) string {
	data, _ := os.ReadFile(path)
	return strings.TrimSpace(string(data))
}
