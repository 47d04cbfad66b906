package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// PlanResponse answers POST /v1/workloads/plan: what registering a spec
// would do, computed on the current state without writing anything.
type PlanResponse struct {
	Workload string `json:"workload"`
	// CheckIndex is the stored workload's modify index (0: none); give it
	// to RegisterWorkloadChecked to register only if nothing changed.
	CheckIndex uint64 `json:"checkIndex"`
	// Diff lists what differs from the stored version, field by field.
	Diff []DiffEntry `json:"diff"`
	// Groups says per group what the scheduler would do now.
	Groups []PlanGroup `json:"groups"`
	// Deployment is the deployment the update would start, nil when every
	// change is applied in place.
	Deployment *Deployment    `json:"deployment,omitempty"`
	Failures   []GroupFailure `json:"failures,omitempty"`
	Stops      []PlanStop     `json:"stops,omitempty"`
	Preempted  []PlanStop     `json:"preempted,omitempty"`
}

// DiffEntry is one changed field: Path as in the spec's JSON form.
type DiffEntry struct {
	Path string `json:"path"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
	// Destructive: the change replaces allocations (else in place).
	Destructive bool `json:"destructive"`
}

// PlanGroup is what a plan would do to one group.
type PlanGroup struct {
	Name    string `json:"name"`
	Place   int    `json:"place"`
	InPlace int    `json:"inPlace"`
	Stop    int    `json:"stop"`
	Preempt int    `json:"preempt"`
	// Rolling says how a destructive update proceeds, empty when none.
	Rolling string `json:"rolling,omitempty"`
}

// PlanStop is one allocation a plan would stop, with the reason.
type PlanStop struct {
	AllocID  string `json:"allocId"`
	Workload string `json:"workload"`
	Group    string `json:"group"`
	NodeID   string `json:"nodeId"`
	Reason   string `json:"reason"`
}

// RevertRequest is the body of POST /v1/workloads/{name}/revert.
type RevertRequest struct {
	Version uint64 `json:"version"`
}

// PromoteRequest is the body of POST /v1/deployments/{id}/promote.
type PromoteRequest struct {
	Groups []string `json:"groups,omitempty"` // empty: every group
}

// FailRequest is the body of POST /v1/deployments/{id}/fail.
type FailRequest struct {
	Reason string `json:"reason,omitempty"`
}

// DeploymentResponse answers promote and fail.
type DeploymentResponse struct {
	Deployment string `json:"deployment"`
	EvalID     string `json:"evalId,omitempty"`
	RevertedTo uint64 `json:"revertedTo,omitempty"`
	Index      uint64 `json:"index"`
}

// PlanWorkload asks what registering doc would do (a dry run).
func (c *Client) PlanWorkload(ctx context.Context, doc []byte) (*PlanResponse, error) {
	var out PlanResponse
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/workloads/plan", body: doc, contentType: "application/yaml", idempotent: true}, &out)
	return &out, err
}

// RegisterWorkloadChecked registers doc only if the stored workload's
// modify index is still checkIndex (0: no such workload yet).
func (c *Client) RegisterWorkloadChecked(ctx context.Context, doc []byte, checkIndex uint64) (*RegisterResponse, error) {
	var out RegisterResponse
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/workloads?checkIndex=" + strconv.FormatUint(checkIndex, 10),
		body: doc, contentType: "application/yaml"}, &out)
	return &out, err
}

// WorkloadVersions lists the kept versions of a workload, oldest first.
func (c *Client) WorkloadVersions(ctx context.Context, name string, q *Query) ([]*WorkloadVersion, QueryMeta, error) {
	var out []*WorkloadVersion
	m, err := c.get(ctx, "/v1/workloads/"+url.PathEscape(name)+"/versions", q, &out)
	return out, m, err
}

// RevertWorkload registers a kept version of a workload again, as a new
// version.
func (c *Client) RevertWorkload(ctx context.Context, name string, version uint64) (*RegisterResponse, error) {
	var out RegisterResponse
	err := c.postJSON(ctx, "/v1/workloads/"+url.PathEscape(name)+"/revert", &RevertRequest{Version: version}, &out, false)
	return &out, err
}

// Deployments lists deployments, newest first; of one workload when
// workload is set.
func (c *Client) Deployments(ctx context.Context, workload string, q *Query) ([]*Deployment, QueryMeta, error) {
	var out []*Deployment
	path := "/v1/deployments"
	if workload != "" {
		path = "/v1/workloads/" + url.PathEscape(workload) + "/deployments"
	}
	m, err := c.get(ctx, path, q, &out)
	return out, m, err
}

// Deployment returns one deployment.
func (c *Client) Deployment(ctx context.Context, id string, q *Query) (*Deployment, QueryMeta, error) {
	var out Deployment
	m, err := c.get(ctx, "/v1/deployments/"+url.PathEscape(id), q, &out)
	return &out, m, err
}

// PromoteDeployment promotes a deployment's canaries (of groups; all
// when empty).
func (c *Client) PromoteDeployment(ctx context.Context, id string, groups []string) (*DeploymentResponse, error) {
	var out DeploymentResponse
	err := c.postJSON(ctx, "/v1/deployments/"+url.PathEscape(id)+"/promote", &PromoteRequest{Groups: groups}, &out, true)
	return &out, err
}

// FailDeployment fails a deployment (reverting it when its groups ask for
// autoRevert).
func (c *Client) FailDeployment(ctx context.Context, id, reason string) (*DeploymentResponse, error) {
	var out DeploymentResponse
	err := c.postJSON(ctx, "/v1/deployments/"+url.PathEscape(id)+"/fail", &FailRequest{Reason: reason}, &out, false)
	return &out, err
}
