package api

import (
	"strconv"
	"strings"
	"time"
)

// Priority classes, highest first. A class maps to a base integer priority;
// a workload may refine it with an explicit integer priority.
const (
	PriorityProduction = "production"
	PriorityBatch      = "batch"
	PriorityBestEffort = "best-effort"
	// PrioritySystem is for the cell's own per-node services (log
	// shippers, monitoring agents): above production, and the class a
	// drain with keepSystem leaves in place.
	PrioritySystem = "system"
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
	// PolicyFGD places where the cell's GPU fragmentation grows least
	// (fragmentation gradient descent, Weng et al., ATC '23).
	PolicyFGD = "fgd"
	// PolicyPredictive is fgd (binpack in a cell without GPU work) steered
	// by the cell's predictions about its nodes (NodeForecast): away from
	// nodes likely to fail, and best-effort work towards the nodes whose
	// predicted peak use leaves room. The seed's PredictiveMLOptimized.
	PolicyPredictive = "predictive"
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
	// Namespace is the tenant the workload belongs to (DefaultNamespace
	// when the spec names none); a workload is known by (Namespace, Name).
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`

	PriorityClass string `json:"priorityClass"`
	Priority      int    `json:"priority"`

	// SchedulingPolicy picks the scoring policy (binpack, spread, ...). An
	// empty Type means the cell's default (CellConfig.SchedulingPolicy).
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
	Type string `json:"type,omitempty"` // binpack, spread, fgd, dot-product, random, predictive; empty: the cell's default
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
	// Ports are node ports the group's tasks listen on (health.go); each
	// task sees them as STRATA_PORT_<NAME>.
	Ports []PortRequest `json:"ports,omitempty"`
	// Services are registered in the cell's service registry for every
	// healthy allocation of the group.
	Services []Service `json:"services,omitempty"`
	// ShutdownDelay is how long the agent waits, once an allocation of
	// the group is told to stop, before it signals the tasks: the
	// allocation left the service registry at once, and clients that still
	// hold the old list of endpoints are served meanwhile (docs/health.md).
	// The spec defaults it to DefaultShutdownDelay for a group that offers
	// a service, 0 otherwise.
	ShutdownDelay time.Duration `json:"shutdownDelay,omitempty"`
	// Reschedule and Disconnect are the server's replacement policies
	// (api/lifecycle.go); nil means the defaults (ReschedulePolicyOf).
	Reschedule *ReschedulePolicy `json:"reschedule,omitempty"`
	Disconnect *DisconnectPolicy `json:"disconnect,omitempty"`
	// AtMostOnce promises that two copies of one replica never run at the
	// same time, even across partitions: the agent fences its copy when its
	// lease lapses and the server replaces it only after the lease surely
	// expired (internal/lease).
	AtMostOnce bool `json:"atMostOnce,omitempty"`
	// Update says how the group moves to a new spec (api/deployment.go);
	// nil means the defaults (UpdatePolicyOf).
	Update *UpdatePolicy `json:"update,omitempty"`
	// Disruption bounds voluntary disruption of the group (drains, moves);
	// nil is the default budget (internal/disruption).
	Disruption *DisruptionPolicy `json:"disruption,omitempty"`
}

// DisruptionPolicy is a group's budget for voluntary disruption: at most
// MaxUnavailable of its replicas may be unavailable at once because the
// cell moves them (drains, quarantine, rebalancing). 0 forbids voluntary
// moves until a drain's deadline.
type DisruptionPolicy struct {
	MaxUnavailable int `json:"maxUnavailable"`
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
	// Devices asks for devices of other classes (devices.go).
	Devices []DeviceRequest `json:"devices,omitempty"`
	// ExclusiveCores pins the task to whole cores of one NUMA node (cpuset).
	ExclusiveCores bool `json:"exclusiveCores,omitempty"`
	// MemoryTiers are the memory tiers the task's memory may live on
	// (api.MemoryTiers); empty means standard only (docs/hardware.md).
	MemoryTiers []string `json:"memoryTiers,omitempty"`

	KillTimeout time.Duration `json:"killTimeout"` // grace between SIGTERM and SIGKILL
	PidsLimit   int64         `json:"pidsLimit"`   // max processes in the task's cgroup

	// Checks are the task's health checks (readiness, liveness).
	Checks []Check `json:"checks,omitempty"`

	// User runs the task as this user: a name or a uid, optionally with
	// ":group" or ":gid". Empty means the node's default, nobody; root
	// only on nodes that allow root tasks (docs/security.md).
	User string `json:"user,omitempty"`
	// (AsksForRoot reads it.)
	// Network is "host" (the default: the node's network namespace) or
	// "isolated" (a network namespace of its own with loopback only).
	Network string `json:"network,omitempty"`
	// Secrets are delivered to the task as files on a tmpfs
	// ($STRATA_SECRETS_DIR/<name>, mode 0400, owned by the task's user)
	// or, with Env set, as that environment variable. Their values are
	// sealed by the server and returned by no API (see Secret).
	Secrets []*Secret `json:"secrets,omitempty"`
}

// Secret is one secret value of a task. A client sends Value; the server
// seals it (AES-GCM, its keyring) into Sealed before the workload enters
// the raft log, and answers users with neither. Only an agent, for an
// allocation placed on its node, receives Value again.
type Secret struct {
	Name string `json:"name"`          // file name under $STRATA_SECRETS_DIR
	Env  string `json:"env,omitempty"` // deliver as this environment variable instead of a file
	// Value is the plaintext: in a submission and in an agent's copy only.
	Value string `json:"value,omitempty"`
	// Sealed is the value encrypted at rest ("<keyID>:<base64>"); set by
	// the server, never by a client, never shown to one.
	Sealed string `json:"sealed,omitempty"`
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

	// Spread spreads the group's replicas over the domains of a topology
	// key (Kubernetes' topologySpreadConstraints).
	Spread []SpreadRule `json:"spread,omitempty"`
	// Affinity keeps replicas in a topology domain that already runs
	// another workload (same rack as X); AntiAffinity keeps them out of
	// such domains. A rule without a workload refers to the group's own
	// replicas: antiAffinity {key: rack} means never two in one rack.
	Affinity     []AffinityRule `json:"affinity,omitempty"`
	AntiAffinity []AffinityRule `json:"antiAffinity,omitempty"`
	// CommunicatesWith names workloads this group exchanges traffic with;
	// nodes closer to them in network hops score higher.
	CommunicatesWith []PeerRule `json:"communicatesWith,omitempty"`
	// DataLocality prefers (or requires) nodes holding shards of a dataset.
	DataLocality []DataRule `json:"dataLocality,omitempty"`
}

// Placement rule modes: a hard rule filters nodes, a soft one scores them.
const (
	ModeHard = "hard"
	ModeSoft = "soft"
)

// SpreadRule limits how unevenly the group's replicas may sit across the
// domains of Key: placing a replica in a domain must not leave it more than
// MaxSkew above the least-loaded eligible domain. A hard rule filters
// nodes; a soft one only scores them, by Weight.
type SpreadRule struct {
	Key     string `json:"key"`
	MaxSkew int    `json:"maxSkew"`
	Mode    string `json:"mode"`             // hard (default) or soft
	Weight  int    `json:"weight,omitempty"` // 1..100, soft only
}

// AffinityRule relates a group to the allocations of a workload (or, with
// no Workload, to the group's own replicas) at the level of a topology
// key: the same rack, zone, node, ...
type AffinityRule struct {
	Workload string `json:"workload,omitempty"` // empty: this group's own replicas
	Group    string `json:"group,omitempty"`    // empty: every group of Workload
	Key      string `json:"key"`
	Mode     string `json:"mode"`             // hard (default) or soft
	Weight   int    `json:"weight,omitempty"` // 1..100, soft only
}

// PeerRule names a workload the group talks to (with no Workload, its own
// replicas talk to each other). Nodes are scored by the mean network hop
// count from them to the peer's allocations, by Weight.
type PeerRule struct {
	Workload string `json:"workload,omitempty"`
	Weight   int    `json:"weight"` // 1..100
}

// DataRule prefers nodes holding shards of Dataset: a node advertises them
// with the label data.strata.dev/<dataset> (its value, when an integer, is
// the shard count). Mode hard requires at least one shard on the node.
type DataRule struct {
	Dataset string `json:"dataset"`
	Mode    string `json:"mode"`             // soft (default) or hard
	Weight  int    `json:"weight,omitempty"` // 1..100, soft only
}

// DatasetLabelPrefix prefixes the node label that says a node holds shards
// of a dataset: data.strata.dev/imagenet=12.
const DatasetLabelPrefix = "data.strata.dev/"

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
	// Window restricts a prefer or avoid rule to a named time window of
	// the cell (e.g. "peak-hours", see CellConfig.TimeWindows): outside it
	// the rule does not apply.
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

// AsksForRoot reports whether the task's user field names root: the user
// or the group "root", or id 0 in any spelling a node reads as a number
// ("0", "00", "+0"; nodes parse ids with strconv.Atoi), user or group.
// What only a node can resolve (a name that maps to uid 0 there, an
// image's user) is refused there: the allocation carries its namespace's
// policy (Allocation.AllowRootTasks) and the node checks the ids it runs.
func (t *Task) AsksForRoot() bool {
	user, group, hasGroup := strings.Cut(t.User, ":")
	isRoot := func(s string) bool {
		n, err := strconv.Atoi(s)
		return s == "root" || (err == nil && n == 0)
	}
	return isRoot(user) || (hasGroup && isRoot(group))
}
