package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
)

// NamespaceOf is ns, or DefaultNamespace when ns is empty (objects
// stored before namespaces existed, requests that name none).
func NamespaceOf(ns string) string {
	if ns == "" {
		return DefaultNamespace
	}
	return ns
}

// Namespace is a tenant of the cell: workloads live in one, ACL policies
// grant capabilities in one, and its Quota bounds what it may hold
// (docs/tenants.md). The default namespace exists implicitly, without a
// quota, until it is applied like any other.
type Namespace struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Quota bounds the namespace's allocations; nil: unbounded.
	Quota *Quota `json:"quota,omitempty"`
	// AllowRootTasks lets the namespace's tasks ask for `user: root` (or
	// uid 0); they still run only on nodes that allow root tasks. The
	// default namespace allows it until a cell manager applies a record
	// for it (docs/tenants.md).
	AllowRootTasks bool   `json:"allowRootTasks,omitempty"`
	CreateIndex    uint64 `json:"createIndex"`
	ModifyIndex    uint64 `json:"modifyIndex"`
}

// Quota is a namespace's limits. A nil field is unbounded; a zero one
// allows none of it. Usage counts every allocation of the namespace the
// cell wants running (CountsAgainstQuota), placed or not yet running.
type Quota struct {
	CPUMilli    *int64 `json:"cpuMilli,omitempty"`
	MemoryBytes *int64 `json:"memoryBytes,omitempty"`
	// GPUMilli bounds GPUs in thousandths: a whole GPU counts 1000, a
	// share its gpuMilli.
	GPUMilli *int64 `json:"gpuMilli,omitempty"`
	// Devices bounds the device handles held: each whole GPU is one, and
	// so is each share of one.
	Devices *int64 `json:"devices,omitempty"`
	// Allocations bounds the number of allocations.
	Allocations *int64 `json:"allocations,omitempty"`
	// MaxPriority is the highest priority a workload of the namespace may
	// have; a workload above it is refused at submission.
	MaxPriority *int `json:"maxPriority,omitempty"`
	// Workloads bounds the workloads the namespace stores, and Replicas
	// the replicas its running workloads want together: a submission
	// past one is refused. Unset: the cell's bounds for namespaces
	// (CellLimits).
	Workloads *int64 `json:"workloads,omitempty"`
	Replicas  *int64 `json:"replicas,omitempty"`
}

// CountsAgainstQuota reports whether a counts in its namespace's usage:
// the cell wants it running and it is not finished. A stopped allocation
// stops counting when the stop is committed, as its node's resources are
// free for a plan from then on (the agent is killing it).
func CountsAgainstQuota(a *Allocation) bool {
	return a != nil && a.DesiredStatus == DesiredRun && !a.Terminal()
}

// QuotaUsage is what a namespace holds, in the dimensions of Quota.
type QuotaUsage struct {
	CPUMilli    int64 `json:"cpuMilli"`
	MemoryBytes int64 `json:"memoryBytes"`
	GPUMilli    int64 `json:"gpuMilli"`
	Devices     int64 `json:"devices"`
	Allocations int64 `json:"allocations"`
}

// UsageOf is what one allocation asking for r counts against a quota.
func UsageOf(r Resources) QuotaUsage {
	u := QuotaUsage{CPUMilli: r.CPUMilli, MemoryBytes: r.MemoryBytes, Allocations: 1}
	u.GPUMilli = addSat(mulSat(r.GPUs, 1000), r.GPUMilli)
	u.Devices = r.GPUs
	if r.GPUMilli > 0 {
		u.Devices++
	}
	return u
}

// mulSat is a × b for a, b ≥ 0, saturating at the int64 range.
func mulSat(a, b int64) int64 {
	if a != 0 && (a*b)/a != b {
		return math.MaxInt64
	}
	return a * b
}

// Times is n × u (n ≥ 0), saturating: what n allocations alike count.
func (u QuotaUsage) Times(n int64) QuotaUsage {
	return QuotaUsage{
		CPUMilli:    mulSat(u.CPUMilli, n),
		MemoryBytes: mulSat(u.MemoryBytes, n),
		GPUMilli:    mulSat(u.GPUMilli, n),
		Devices:     mulSat(u.Devices, n),
		Allocations: mulSat(u.Allocations, n),
	}
}

// Add returns u + o, saturating.
func (u QuotaUsage) Add(o QuotaUsage) QuotaUsage {
	return QuotaUsage{
		CPUMilli:    addSat(u.CPUMilli, o.CPUMilli),
		MemoryBytes: addSat(u.MemoryBytes, o.MemoryBytes),
		GPUMilli:    addSat(u.GPUMilli, o.GPUMilli),
		Devices:     addSat(u.Devices, o.Devices),
		Allocations: addSat(u.Allocations, o.Allocations),
	}
}

// Sub returns u - o, saturating.
func (u QuotaUsage) Sub(o QuotaUsage) QuotaUsage {
	return QuotaUsage{
		CPUMilli:    subSat(u.CPUMilli, o.CPUMilli),
		MemoryBytes: subSat(u.MemoryBytes, o.MemoryBytes),
		GPUMilli:    subSat(u.GPUMilli, o.GPUMilli),
		Devices:     subSat(u.Devices, o.Devices),
		Allocations: subSat(u.Allocations, o.Allocations),
	}
}

// Exceeded names the first dimension in which u is beyond q, with the
// figures ("" when u is within q). A nil quota bounds nothing.
func (q *Quota) Exceeded(u QuotaUsage) string {
	if q == nil {
		return ""
	}
	for _, d := range []struct {
		name  string
		limit *int64
		used  int64
	}{
		{"cpuMilli", q.CPUMilli, u.CPUMilli},
		{"memoryBytes", q.MemoryBytes, u.MemoryBytes},
		{"gpuMilli", q.GPUMilli, u.GPUMilli},
		{"devices", q.Devices, u.Devices},
		{"allocations", q.Allocations, u.Allocations},
	} {
		if d.limit != nil && d.used > *d.limit {
			return fmt.Sprintf("quota.%s: %d needed, %d allowed", d.name, d.used, *d.limit)
		}
	}
	return ""
}

// NamespaceStatus is a namespace with what it holds, as
// `strata namespace show` and `strata quota show` print it.
type NamespaceStatus struct {
	Namespace
	Usage     QuotaUsage `json:"usage"`
	Workloads int        `json:"workloads"`
	// Replicas is what the namespace's running workloads want together
	// (quota.replicas bounds it).
	Replicas int64 `json:"replicas"`
}

// QueryNamespace is the query parameter that names a request's namespace.
const QueryNamespace = "namespace"

// Namespaces lists the namespaces with their usage.
func (c *Client) Namespaces(ctx context.Context) ([]*NamespaceStatus, error) {
	var out []*NamespaceStatus
	_, err := c.get(ctx, "/v1/namespaces", nil, &out)
	return out, err
}

// NamespaceStatus reads one namespace with its usage.
func (c *Client) NamespaceStatus(ctx context.Context, name string) (*NamespaceStatus, error) {
	var out NamespaceStatus
	_, err := c.get(ctx, "/v1/namespaces/"+url.PathEscape(name), nil, &out)
	return &out, err
}

// ApplyNamespace creates or replaces a namespace (and its quota).
func (c *Client) ApplyNamespace(ctx context.Context, ns *Namespace) (*Namespace, error) {
	b, err := json.Marshal(ns)
	if err != nil {
		return nil, err
	}
	var out Namespace
	_, err = c.do(ctx, request{method: http.MethodPut, path: "/v1/namespaces", body: b, contentType: "application/json", idempotent: true}, &out)
	return &out, err
}

// DeleteNamespace deletes an empty namespace.
func (c *Client) DeleteNamespace(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: "/v1/namespaces/" + url.PathEscape(name), idempotent: true}, nil)
	return err
}
