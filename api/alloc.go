package api

import (
	"strings"
	"time"
)

// Allocation desired statuses (set by the server).
const (
	DesiredRun  = "run"
	DesiredStop = "stop"
)

// Allocation client statuses (reported by the agent, except lost).
const (
	AllocPending  = "pending"
	AllocRunning  = "running"
	AllocComplete = "complete"
	AllocFailed   = "failed"
	AllocLost     = "lost" // set by the server when the node went down
)

// Task states reported by the agent.
const (
	TaskPending = "pending"
	TaskRunning = "running"
	TaskDead    = "dead"
)

// Allocation is one instance of a task group placed on one node.
type Allocation struct {
	ID        string `json:"id"`
	Namespace string `json:"namespace"` // the workload's
	Workload  string `json:"workload"`
	Group     string `json:"group"`
	Index     int    `json:"index"` // replica index within the group, 0..replicas-1
	NodeID    string `json:"nodeId"`
	NodeName  string `json:"nodeName,omitempty"`

	WorkloadVersion uint64     `json:"workloadVersion"`
	Priority        int        `json:"priority"`
	TaskGroup       *TaskGroup `json:"taskGroup"` // the group spec this allocation runs
	// AllowRootTasks is set on the copies a server sends the allocation's
	// agent (never stored): its namespace lets its tasks run as root
	// (Namespace.AllowRootTasks, as it was when the list was answered).
	// Without it the node refuses a task that would run as uid 0, gid 0
	// or group 0, whatever the node's own --allow-root-tasks.
	AllowRootTasks bool       `json:"allowRootTasks,omitempty"`
	Resources      Resources  `json:"resources"` // sum over the group's tasks
	Assignment     Assignment `json:"assignment"`

	DesiredStatus string `json:"desiredStatus"`
	DesiredReason string `json:"desiredReason,omitempty"`
	ClientStatus  string `json:"clientStatus"`
	ClientReason  string `json:"clientReason,omitempty"`
	// ClientStatusTime is when the client status last changed, by the
	// server's clock (stamped before proposing): reschedule delays count
	// from a failure's time.
	ClientStatusTime time.Time `json:"clientStatusTime,omitempty"`

	TaskStates map[string]*TaskState `json:"taskStates,omitempty"`
	// Health is the agent's last health report; Healthy() is what to ask.
	Health *AllocHealth `json:"health,omitempty"`

	PreviousAlloc string `json:"previousAlloc,omitempty"` // the allocation this one replaces
	PreemptedBy   string `json:"preemptedBy,omitempty"`   // set when a higher-priority placement evicted it
	// Migration is the checkpoint or move in flight, or the last one.
	Migration   *Migration `json:"migration,omitempty"`
	CreateTime  time.Time  `json:"createTime"`
	CreateIndex uint64     `json:"createIndex"`
	ModifyIndex uint64     `json:"modifyIndex"`
}

// Assignment is the concrete hardware an allocation was given.
type Assignment struct {
	CPUs     []int    `json:"cpus,omitempty"`     // exclusive cores, when asked for
	NUMANode int      `json:"numaNode"`           // -1 when not pinned
	GPUs     []string `json:"gpus,omitempty"`     // GPU ids on the node
	GPUMilli int64    `json:"gpuMilli,omitempty"` // share of GPUs[0] for a fractional request
	// Ports are the group's ports on the node, in the group's order.
	Ports []AssignedPort `json:"ports,omitempty"`
	// Devices are the ids of the node's devices (Node.Devices) given to
	// the group, in the order of its tasks' requests.
	Devices []string `json:"devices,omitempty"`
}

// TaskState is the agent's view of one task.
type TaskState struct {
	State      string    `json:"state"` // pending, running, dead
	PID        int       `json:"pid,omitempty"`
	ExitCode   int       `json:"exitCode"`
	Signal     int       `json:"signal,omitempty"`
	OOMKilled  bool      `json:"oomKilled,omitempty"`
	Failed     bool      `json:"failed,omitempty"`
	Restarts   int       `json:"restarts"`
	Message    string    `json:"message,omitempty"`
	StartedAt  time.Time `json:"startedAt,omitempty"`
	FinishedAt time.Time `json:"finishedAt,omitempty"`
	// RunsAs is "uid:gid" of the task's process as its node read it once
	// it ran (a container's user comes from its image): what a move can
	// keep the memory of depends on it (NodeCheckpoint.RootOnly).
	RunsAs string `json:"runsAs,omitempty"`
}

// RunsAsRoot reports whether the task's process was seen running as uid 0.
func (s *TaskState) RunsAsRoot() bool { return s != nil && strings.HasPrefix(s.RunsAs, "0:") }

// Terminal reports whether the allocation no longer holds node resources.
func (a *Allocation) Terminal() bool {
	switch a.ClientStatus {
	case AllocComplete, AllocFailed, AllocLost:
		return true
	}
	// A preempted allocation gives its resources to its preemptor at once,
	// so the node's accounting never counts both (its agent kills it).
	return a.DesiredStatus == DesiredStop && (a.ClientStatus == AllocPending || a.PreemptedBy != "")
}

// Copy returns a copy of a that may be modified without touching a. The
// TaskGroup spec is shared: it is immutable once stored.
func (a *Allocation) Copy() *Allocation {
	if a == nil {
		return nil
	}
	c := *a
	c.Assignment.CPUs = append([]int(nil), a.Assignment.CPUs...)
	c.Assignment.GPUs = append([]string(nil), a.Assignment.GPUs...)
	c.Assignment.Ports = append([]AssignedPort(nil), a.Assignment.Ports...)
	c.Assignment.Devices = append([]string(nil), a.Assignment.Devices...)
	if a.Health != nil {
		h := *a.Health
		h.Checks = append([]CheckResult(nil), a.Health.Checks...)
		c.Health = &h
	}
	if a.Migration != nil {
		m := *a.Migration
		m.TargetAssignment.CPUs = append([]int(nil), a.Migration.TargetAssignment.CPUs...)
		m.TargetAssignment.GPUs = append([]string(nil), a.Migration.TargetAssignment.GPUs...)
		m.TargetAssignment.Ports = append([]AssignedPort(nil), a.Migration.TargetAssignment.Ports...)
		m.TargetAssignment.Devices = append([]string(nil), a.Migration.TargetAssignment.Devices...)
		if a.Migration.Report != nil {
			r := *a.Migration.Report
			m.Report = &r
		}
		c.Migration = &m
	}
	if a.TaskStates != nil {
		c.TaskStates = make(map[string]*TaskState, len(a.TaskStates))
		for k, v := range a.TaskStates {
			if v == nil {
				// Never stored since the API edge refuses it; a log written
				// before that must still replay (it crashed the FSM).
				continue
			}
			ts := *v
			c.TaskStates[k] = &ts
		}
	}
	return &c
}

// AllocUpdate is what an agent reports about one allocation.
type AllocUpdate struct {
	ID           string                `json:"id"`
	ClientStatus string                `json:"clientStatus"`
	ClientReason string                `json:"clientReason,omitempty"`
	TaskStates   map[string]*TaskState `json:"taskStates,omitempty"`
	Health       *AllocHealth          `json:"health,omitempty"`
}
