package api

import "time"

// NodeStub is a node's line in a long list (GET /v1/nodes?stub=true, the
// web UI's overview, topology and node list): its place, its state and its
// capacity against what is allocated, without its NUMA layout, devices and
// history.
type NodeStub struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Labels       map[string]string `json:"labels,omitempty"`
	Status       string            `json:"status"`
	StatusReason string            `json:"statusReason,omitempty"`
	Eligibility  string            `json:"eligibility,omitempty"`
	Draining     bool              `json:"draining,omitempty"`    // a drain runs
	Quarantined  bool              `json:"quarantined,omitempty"` // fenced off
	Capacity     Resources         `json:"capacity"`
	Allocated    Resources         `json:"allocated"`
	GPUCount     int               `json:"gpuCount,omitempty"`
	// LastHeartbeat is when the server last heard from the node's agent.
	LastHeartbeat time.Time `json:"lastHeartbeat,omitempty"`
	ModifyIndex   uint64    `json:"modifyIndex"`
}

// Stub returns n's line in a long list.
func (n *Node) Stub() NodeStub {
	return NodeStub{ID: n.ID, Name: n.Name, Labels: n.Labels, Status: n.Status, StatusReason: n.StatusReason,
		Eligibility: n.Eligibility, Draining: n.Drain != nil, Quarantined: n.Quarantine != nil,
		Capacity: n.Capacity, Allocated: n.Allocated, GPUCount: len(n.GPUs), LastHeartbeat: n.LastHeartbeat, ModifyIndex: n.ModifyIndex}
}

// NodeStubs is a list of node stubs, written without indentation: 10,000
// of them are read at once.
type NodeStubs []NodeStub

// CompactJSON marks the list as written without indentation.
func (NodeStubs) CompactJSON() {}
