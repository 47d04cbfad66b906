package api

import "time"

// AllocationStub is an allocation's line in a long list (GET
// /v1/allocations?stub=true): what a list shows and filters on, without
// the group spec, task states and assignment a full Allocation carries. A
// list of 100,000 stubs is a few tens of megabytes less than the full
// allocations (the web UI's allocation list, docs/ui.md).
type AllocationStub struct {
	ID              string    `json:"id"`
	Namespace       string    `json:"namespace"`
	Workload        string    `json:"workload"`
	Group           string    `json:"group"`
	Index           int       `json:"index"`
	NodeID          string    `json:"nodeId"`
	NodeName        string    `json:"nodeName,omitempty"`
	WorkloadVersion uint64    `json:"workloadVersion"`
	DesiredStatus   string    `json:"desiredStatus"`
	ClientStatus    string    `json:"clientStatus"`
	Health          string    `json:"health,omitempty"` // AllocHealth.Status, "" before the first report
	Restarts        int       `json:"restarts,omitempty"`
	CPUMilli        int64     `json:"cpuMilli,omitempty"`
	MemoryBytes     int64     `json:"memoryBytes,omitempty"`
	CreateTime      time.Time `json:"createTime"`
	ModifyIndex     uint64    `json:"modifyIndex"`
}

// Stub returns a's line in a long list.
func (a *Allocation) Stub() AllocationStub {
	s := AllocationStub{ID: a.ID, Namespace: a.Namespace, Workload: a.Workload, Group: a.Group, Index: a.Index,
		NodeID: a.NodeID, NodeName: a.NodeName, WorkloadVersion: a.WorkloadVersion,
		DesiredStatus: a.DesiredStatus, ClientStatus: a.ClientStatus,
		CPUMilli: a.Resources.CPUMilli, MemoryBytes: a.Resources.MemoryBytes,
		CreateTime: a.CreateTime, ModifyIndex: a.ModifyIndex}
	if a.Health != nil {
		s.Health = a.Health.Status
	}
	for _, ts := range a.TaskStates {
		if ts != nil {
			s.Restarts += ts.Restarts
		}
	}
	return s
}
