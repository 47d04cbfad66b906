package api

import "time"

// Priority classes, highest first. A class maps to a base integer priority;
// a workload may refine it with an explicit integer priority.
const (
	PriorityProduction = "production"
	PriorityBatch      = "batch"
	PriorityBestEffort = "best-effort"
)

// Scheduling policies known to the scheduler.
const (
	PolicyBinpack = "binpack"
	PolicySpread  = "spread"
	// PolicyDotProduct prefers the node whose free resources align least
	// with the request (Tetris-style alignment, as in the FGD paper).
	PolicyDotProduct = "dot-product"
	// PolicyRandom picks a feasible node uniformly (deterministically per state).
	PolicyRandom = "random"
)

// Restart modes.
const (
	RestartNever     = "never"
	RestartOnFailure = "on-failure"
	RestartAlways    = "always"
)

// Workload is the user's object: what should run, how much of it, and where.
// It is the validated, defaulted form of a `kind: Workload` YAML document;
// internal/spec produces it.
type Workload struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`

	PriorityClass string `json:"priorityClass"`
	Priority      int    `json:"priority"`

	// SchedulingPolicy picks the scoring policy (binpack, spread, ...).
	SchedulingPolicy SchedulingPolicy `json:"schedulingPolicy"`
	Groups           []*TaskGroup     `json:"groups"`

	// Unenforced lists what was accepted from the spec but is not yet acted
	// on by this version of Strata. It is shown by `strata status`, never
	// silently dropped.
	Unenforced []Notice `json:"unenforced,omitempty"`

	Stopped bool `json:"stopped,omitempty"` // `strata stop` sets it; allocations are stopped

	Version     uint64    `json:"version"` // bumped on every accepted update
	SubmitTime  time.Time `json:"submitTime"`
	CreateIndex uint64    `json:"createIndex"`
	ModifyIndex uint64    `json:"modifyIndex"`
}

// SchedulingPolicy selects and tunes the placement scoring of a workload.
type SchedulingPolicy struct {
	Type string `json:"type"` // binpack (default), spread, ...
	// Original keeps what the user wrote when Type was mapped from another
	// vocabulary (e.g. the seed's PredictiveMLOptimized).
	Original string `json:"original,omitempty"`
}

// TaskGroup is a set of tasks that are always placed together on one node;
// one instance of a group is one Allocation. Replicas instances are wanted.
type TaskGroup struct {
	Name          string        `json:"name"`
	Replicas      int           `json:"replicas"`
	Tasks         []*Task       `json:"tasks"`
	Placement     Placement     `json:"placement"`
	RestartPolicy RestartPolicy `json:"restartPolicy"`
	// Gang, when set, places the group all-or-nothing.
	Gang *GangPolicy `json:"gang,omitempty"`
}

// GangPolicy places at least MinMember instances of a group at once, or none,
// preferring the tightest topology domain that holds them all.
type GangPolicy struct {
	MinMember int           `json:"minMember"`
	Timeout   time.Duration `json:"timeout"`            // how long the gang may wait before its evaluation reports it unplaceable
	Topology  string        `json:"topology,omitempty"` // tightest domain tried first, e.g. rack; wider ones (row, zone, …) after
}

// Resources returns the sum of the group's task resources: what one
// allocation of the group needs on a node.
func (g *TaskGroup) Resources() Resources {
	var r Resources
	for _, t := range g.Tasks {
		r = r.Add(t.Resources)
	}
	return r
}

// ExclusiveCores reports whether any task of the group asks for dedicated cores.
func (g *TaskGroup) ExclusiveCores() bool {
	for _, t := range g.Tasks {
		if t.ExclusiveCores {
			return true
		}
	}
	return false
}

// Task is one process (or container) of a group.
type Task struct {
	Name    string            `json:"name"`
	Driver  string            `json:"driver"` // exec (default), mock
	Command []string          `json:"command"`
	Env     map[string]string `json:"env,omitempty"`
	WorkDir string            `json:"workDir,omitempty"`
	Image   string            `json:"image,omitempty"` // accepted for the containerd driver; exec ignores it

	Resources Resources `json:"resources"`
	// GPUModels lists the acceptable GPU models; empty means any.
	GPUModels []string `json:"gpuModels,omitempty"`
	// ExclusiveCores pins the task to whole cores of one NUMA node (cpuset).
	ExclusiveCores bool `json:"exclusiveCores,omitempty"`

	KillTimeout time.Duration `json:"killTimeout"` // grace between SIGTERM and SIGKILL
	PidsLimit   int64         `json:"pidsLimit"`   // max processes in the task's cgroup
}

// RestartPolicy says what the agent does when a task exits.
type RestartPolicy struct {
	Mode     string        `json:"mode"`     // never, on-failure, always
	Attempts int           `json:"attempts"` // restarts allowed before the allocation fails; 0 = unlimited for "always"
	Delay    time.Duration `json:"delay"`    // first backoff
	MaxDelay time.Duration `json:"maxDelay"` // backoff cap (doubling)
}

// Placement holds the placement rules of a group.
type Placement struct {
	Require []LabelRule `json:"require,omitempty"` // hard: a node must match every rule
	Prefer  []LabelRule `json:"prefer,omitempty"`  // soft: matching nodes score higher by Weight
	Avoid   []LabelRule `json:"avoid,omitempty"`   // soft: matching nodes score lower by Weight
}

// Label rule operators.
const (
	OpEqual    = "="
	OpNotEqual = "!="
	OpIn       = "in"
	OpNotIn    = "notin"
	OpExists   = "exists"
)

// LabelRule matches a node label.
type LabelRule struct {
	Key    string   `json:"key"`
	Op     string   `json:"op"`
	Values []string `json:"values,omitempty"`
	Weight int      `json:"weight,omitempty"` // 1..100 for prefer/avoid
	// Window restricts an avoid rule to a named time window of the cell
	// (e.g. "peak-hours"). Not yet enforced: see Workload.Unenforced.
	Window string `json:"window,omitempty"`
	// Source is the user's original text when the rule was mapped from the
	// seed's placementConstraints shorthand.
	Source string `json:"source,omitempty"`
}

// Notice is something accepted from a spec but not acted on.
type Notice struct {
	Field   string `json:"field"`   // field path, e.g. spec.placementConstraints.numaNode
	Value   string `json:"value"`   // what the user wrote
	Message string `json:"message"` // e.g. "accepted, not yet enforced"
}
