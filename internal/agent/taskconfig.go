package agent

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/spec"
)

// taskConfigFor is the one place a task's configuration is assembled from
// its allocation, once, when its runner is made: what every start of it
// has. What may differ from start to start (the shared cpuset, the
// resources a resize gave it) the prestart hooks add (hooks.go).
func (a *Agent) taskConfigFor(alloc *api.Allocation, task *api.Task, taskDir string, devices []string) drivers.TaskConfig {
	cfg := drivers.TaskConfig{
		ID: alloc.ID + "/" + task.Name, AllocID: alloc.ID, Name: task.Name,
		Task: task, TaskDir: taskDir, Resources: task.Resources,
		// The allocation's hardware: exclusive cores and their NUMA node,
		// GPUs.
		CPUs: alloc.Assignment.CPUs, NUMANode: alloc.Assignment.NUMANode, GPUs: alloc.Assignment.GPUs,
		LogMaxBytes: a.cfg.LogMaxBytes, LogMaxFiles: a.cfg.LogMaxFiles,
	}
	if len(cfg.CPUs) == 0 {
		cfg.NUMANode = -1
	}
	// Its environment: the STRATA_* variables, its ports, GPUs and
	// devices, under the task's own variables.
	cfg.Env = a.taskEnv(alloc, task, taskDir)
	deviceEnv(cfg.Env, a.node, devices)
	// The device nodes it is given and those it is denied.
	cfg.Devices, cfg.DenyDevices = a.devNodes.forTask(alloc.Assignment.GPUs, devices)
	// The memory tiers it accepts (refuseHook fails it where there is none).
	cfg.Mems, _ = taskMems(a.node.NUMA, alloc.Assignment, task)
	// Its namespace's root policy, on top of the node's.
	if !alloc.AllowRootTasks {
		cfg.RootVeto = fmt.Sprintf("namespace %q does not allow root tasks (a cell manager sets allowRootTasks on it)", api.NamespaceOf(alloc.Namespace))
	}
	// A fenced group's watcher enforces its lease fence, also on a task
	// restored from a checkpoint (fenceHook writes the fence).
	_, cfg.Fenced = a.lease.fence(alloc.TaskGroup)
	return cfg
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

// taskDir is where a task of an allocation keeps its files.
func (a *Agent) taskDir(allocID, task string) string {
	return filepath.Join(a.cfg.DataDir, "allocs", allocID, task)
}
