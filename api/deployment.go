package api

import "time"

// UpdatePolicy says how a group moves to a new version of its spec (a
// change that needs its allocations replaced). It is Nomad's `update`
// block, made at least as safe: a replacement is placed beside the copy it
// replaces, and the old copy stops only once the replacement is healthy
// (docs/deployments.md).
type UpdatePolicy struct {
	// MaxParallel is how many replacements may be in flight (placed, not
	// yet healthy) at once. The group never has fewer than
	// Replicas − MaxParallel healthy allocations because of an update.
	MaxParallel int `json:"maxParallel"`
	// MinHealthyTime is how long a replacement must have been running
	// before it counts as healthy.
	MinHealthyTime time.Duration `json:"minHealthyTime"`
	// HealthyDeadline is how long after its placement a replacement may
	// take to become healthy; past it, it is unhealthy.
	HealthyDeadline time.Duration `json:"healthyDeadline"`
	// ProgressDeadline fails the deployment when no replacement became
	// healthy for this long (since the deployment began or the last one
	// did). 0: the first unhealthy replacement fails it.
	ProgressDeadline time.Duration `json:"progressDeadline"`
	// Canary replacements run beside the whole old version until the
	// deployment is promoted; then the rolling update goes on.
	Canary int `json:"canary"`
	// AutoPromote promotes once every canary is healthy.
	AutoPromote bool `json:"autoPromote"`
	// AutoRevert registers the last stable version again when the
	// deployment fails.
	AutoRevert bool `json:"autoRevert"`
	// Stagger is the least time between two batches of replacements: a
	// replacement is placed no sooner than Stagger after the group's
	// previous one.
	Stagger time.Duration `json:"stagger"`
}

// Defaults of the update block (docs/deployments.md).
const (
	DefaultUpdateMaxParallel      = 1
	DefaultUpdateMinHealthyTime   = 10 * time.Second
	DefaultUpdateHealthyDeadline  = 5 * time.Minute
	DefaultUpdateProgressDeadline = 10 * time.Minute
)

// DefaultUpdatePolicy is the policy of a group that writes no update
// block: one replacement at a time, healthy after 10 s of running, within
// 5 minutes, the deployment failed after 10 minutes without progress, no
// canaries, no automatic promotion or revert, no stagger.
func DefaultUpdatePolicy() UpdatePolicy {
	return UpdatePolicy{
		MaxParallel: DefaultUpdateMaxParallel, MinHealthyTime: DefaultUpdateMinHealthyTime,
		HealthyDeadline: DefaultUpdateHealthyDeadline, ProgressDeadline: DefaultUpdateProgressDeadline,
	}
}

// UpdatePolicyOf returns the group's update policy, defaulted.
func (g *TaskGroup) UpdatePolicyOf() UpdatePolicy {
	if g.Update != nil {
		return *g.Update
	}
	return DefaultUpdatePolicy()
}

// Deployment statuses.
const (
	DeploymentRunning    = "running"
	DeploymentBlocked    = "blocked"    // a replacement fits nowhere: the old version keeps running
	DeploymentPaused     = "paused"     // canaries wait for promotion
	DeploymentSuccessful = "successful" // every replica runs the new version, healthy
	DeploymentFailed     = "failed"
	DeploymentCancelled  = "cancelled" // a newer version superseded it
)

// DeploymentTerminal reports whether a deployment status is final.
func DeploymentTerminal(status string) bool {
	switch status {
	case DeploymentSuccessful, DeploymentFailed, DeploymentCancelled:
		return true
	}
	return false
}

// Deployment follows one destructive update of a workload: from the
// version that ran (FromVersion) to Version.
type Deployment struct {
	ID string `json:"id"`
	// Namespace is the workload's (docs/tenants.md).
	Namespace         string             `json:"namespace"`
	Workload          string             `json:"workload"`
	Version           uint64             `json:"version"`
	FromVersion       uint64             `json:"fromVersion"`
	Status            string             `json:"status"`
	StatusDescription string             `json:"statusDescription,omitempty"`
	Groups            []*DeploymentGroup `json:"groups"`
	// RevertedTo is the version registered again when the deployment
	// failed with autoRevert (0: none).
	RevertedTo  uint64    `json:"revertedTo,omitempty"`
	CreateTime  time.Time `json:"createTime"`
	ModifyTime  time.Time `json:"modifyTime"`
	CreateIndex uint64    `json:"createIndex"`
	ModifyIndex uint64    `json:"modifyIndex"`
	// Guard is what the leader's rollout guard has seen of the deployment
	// while it runs (docs/incidents.md); set when the API serves it,
	// never stored.
	Guard *DeploymentGuard `json:"guard,omitempty"`
}

// DeploymentGuard is the rollout guard's evidence on a deployment under
// way: the new version's starts against the old version's start failure
// rate, its trouble beside the old version's copies, its trouble rate
// against the old version's before the deployment.
type DeploymentGuard struct {
	StartTrials       int     `json:"startTrials"`
	StartFailures     int     `json:"startFailures"`
	BaselineStartRate float64 `json:"baselineStartRate"`
	// EventsNew and EventsOld count the trouble beside the old version;
	// ExpectedNew how much of it the new version would have had, were it
	// alike.
	EventsNew   int     `json:"eventsNew"`
	EventsOld   int     `json:"eventsOld"`
	ExpectedNew float64 `json:"expectedNew"`
	// ExposureHours of new copies past their start, their HistoryEvents,
	// against BaselineRate per copy-hour (0: no baseline).
	ExposureHours float64 `json:"exposureHours"`
	HistoryEvents int     `json:"historyEvents"`
	BaselineRate  float64 `json:"baselineRate"`
	// Explained counts trouble the cell explained otherwise (an
	// infrastructure incident); Waiting the trouble still settling.
	Explained int `json:"explained"`
	Waiting   int `json:"waiting"`
	// Halted is the guard's reason when it halted the deployment.
	Halted string `json:"halted,omitempty"`
}

// Group returns the deployment's record of a group, nil if none.
func (d *Deployment) Group(name string) *DeploymentGroup {
	for _, g := range d.Groups {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// AutoRevert reports whether any group of the deployment asks for an
// automatic revert on failure.
func (d *Deployment) AutoRevert() bool {
	for _, g := range d.Groups {
		if g.AutoRevert {
			return true
		}
	}
	return false
}

// Copy returns a deep copy.
func (d *Deployment) Copy() *Deployment {
	if d == nil {
		return nil
	}
	c := *d
	c.Groups = make([]*DeploymentGroup, len(d.Groups))
	for i, g := range d.Groups {
		gc := *g
		c.Groups[i] = &gc
	}
	if d.Guard != nil {
		gc := *d.Guard
		c.Guard = &gc
	}
	return &c
}

// DeploymentGroup is the progress of one group of a deployment.
type DeploymentGroup struct {
	Name            string `json:"name"`
	Desired         int    `json:"desired"`
	DesiredCanaries int    `json:"desiredCanaries"`
	AutoPromote     bool   `json:"autoPromote"`
	AutoRevert      bool   `json:"autoRevert"`
	Promoted        bool   `json:"promoted"`
	// Placed, Healthy and Unhealthy count the group's allocations of the
	// new version; Canaries the placed ones that are canaries.
	Placed    int `json:"placed"`
	Healthy   int `json:"healthy"`
	Unhealthy int `json:"unhealthy"`
	Canaries  int `json:"canaries"`
	// OldRunning counts the live allocations of older versions.
	OldRunning int `json:"oldRunning"`
	// LastProgress is when the deployment began or a replacement last
	// became healthy; ProgressDeadline counts from it.
	LastProgress time.Time `json:"lastProgress"`
}

// DeploymentProgress is what a scheduler plan learned about the
// workload's deployment; the plan applier commits it with the plan.
type DeploymentProgress struct {
	ID                string             `json:"id"`
	Status            string             `json:"status"`
	StatusDescription string             `json:"statusDescription,omitempty"`
	Groups            []*DeploymentGroup `json:"groups"`
}

// WorkloadVersion is one accepted version of a workload, kept in its
// history (state.MaxWorkloadVersions per workload).
type WorkloadVersion struct {
	Workload *Workload `json:"workload"`
	Version  uint64    `json:"version"`
	// Stable is set once the version ran healthy: its deployment
	// succeeded, or it needed none and the version it came from was
	// stable. Reverts go to the newest stable version.
	Stable       bool      `json:"stable"`
	DeploymentID string    `json:"deploymentId,omitempty"`
	SubmitTime   time.Time `json:"submitTime"`
}
