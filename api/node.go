package api

import "time"

// Node statuses.
const (
	NodeReady    = "ready"
	NodeDown     = "down"
	NodeDraining = "draining"
	// NodeQuarantined is a live node an operator (or the cell) fenced off:
	// it takes no new work and its work is drained (nodeops.go).
	NodeQuarantined = "quarantined"
)

// Well-known topology label keys, from the widest failure domain to the
// narrowest. Any other label is a free-form attribute.
const (
	LabelRegion     = "region"
	LabelZone       = "zone"
	LabelDatacenter = "datacenter"
	LabelRow        = "row"
	LabelRack       = "rack"
	LabelNode       = "node"
	LabelPowerZone  = "powerZone"
	LabelSwitch     = "switch"
	LabelSpine      = "spine"
)

// Node is one machine of the cell as its agent fingerprinted it.
type Node struct {
	ID       string            `json:"id"`
	Name     string            `json:"name"`
	HTTPAddr string            `json:"httpAddr,omitempty"` // the agent's own API (logs), e.g. http://127.0.0.1:4690
	Labels   map[string]string `json:"labels,omitempty"`

	// Capacity is what the node offers to tasks.
	Capacity Resources `json:"capacity"`
	// Allocated is the sum of the resources of the node's non-terminal
	// allocations. The state store maintains it incrementally; agents never
	// set it.
	Allocated Resources `json:"allocated"`

	NUMA []NUMANode `json:"numa,omitempty"`
	GPUs []GPU      `json:"gpus,omitempty"`
	// Devices are the node's devices of other classes (devices.go).
	Devices []Device `json:"devices,omitempty"`

	// Drivers are the task drivers the node's agent offers, sorted
	// ("containerd", "exec", "mock"). A node that reports none is taken
	// to offer DefaultDrivers (agents from before drivers were reported).
	Drivers []string `json:"drivers,omitempty"`

	// Checkpoint says whether the node can checkpoint and restore tasks
	// (CRIU found and working); nil from agents that do not say.
	Checkpoint *NodeCheckpoint `json:"checkpoint,omitempty"`

	// DiskPressure, set by the agent, says why the file system of its
	// data dir (task directories and logs) is short of space; empty when
	// it is not. Under it task logs are being dropped (their writers keep
	// the last logs.DefaultKeepFree bytes for the node); the change is
	// also a node-agent event.
	DiskPressure string `json:"diskPressure,omitempty"`

	// DynamicPorts, when set, is the range the scheduler draws this
	// node's dynamic ports from instead of DynamicPortMin-DynamicPortMax
	// (the agent's --dynamic-ports).
	DynamicPorts *PortRange `json:"dynamicPorts,omitempty"`

	Status        string    `json:"status"`
	StatusReason  string    `json:"statusReason,omitempty"`
	LastHeartbeat time.Time `json:"lastHeartbeat,omitempty"` // stamped by the server before proposing
	// LeaseTTL is the lease the node's last heartbeat renewed; with
	// LastHeartbeat it says when the agent's lease surely ended (set when
	// the node is marked down).
	LeaseTTL time.Duration `json:"leaseTtl,omitempty"`

	// Operator state (nodeops.go), owned by the server: an agent that
	// registers never sets or clears it.
	Eligibility string      `json:"eligibility,omitempty"` // "" or eligible, ineligible (cordoned)
	Drain       *DrainSpec  `json:"drain,omitempty"`       // set while a drain runs
	Quarantine  *Quarantine `json:"quarantine,omitempty"`  // set while the node is quarantined
	// QuarantineLifted is when an operator last lifted the node's
	// quarantine: automatic quarantine weighs no evidence from before it.
	QuarantineLifted time.Time `json:"quarantineLifted,omitempty"`
	// Downs are the last times (at most MaxNodeDowns, oldest first) the
	// server marked the node down: automatic quarantine counts them to
	// find a node whose heartbeats flap. Server-owned, like the above.
	Downs []time.Time `json:"downs,omitempty"`

	CreateIndex uint64 `json:"createIndex"`
	ModifyIndex uint64 `json:"modifyIndex"`

	// AgentNotices, sent by an agent when it registers, become node-agent
	// events (what it refused, adopted or stopped while the cell could not
	// hear it); the server does not store them on the node.
	AgentNotices []string `json:"agentNotices,omitempty"`
}

// NUMANode is one NUMA node: its CPU ids and local memory.
type NUMANode struct {
	ID          int   `json:"id"`
	CPUs        []int `json:"cpus"`
	MemoryBytes int64 `json:"memoryBytes"`
	// Tier is MemoryTierSlow for a node without CPUs; "" is standard.
	Tier string `json:"tier,omitempty"`
}

// GPU is one physical accelerator.
type GPU struct {
	ID          string `json:"id"` // stable id on the node, e.g. "0" or a UUID
	Model       string `json:"model"`
	MemoryBytes int64  `json:"memoryBytes,omitempty"`
	NUMA        int    `json:"numa"` // NUMA node the GPU is attached to, -1 if unknown
}

// DefaultDrivers are what a node that reports no drivers offers.
var DefaultDrivers = []string{"exec", "mock"}

// HasDriver reports whether the node offers the task driver name ("" is
// the default driver, exec).
func (n *Node) HasDriver(name string) bool {
	if name == "" {
		name = "exec"
	}
	drivers := n.Drivers
	if len(drivers) == 0 {
		drivers = DefaultDrivers
	}
	for _, d := range drivers {
		if d == name {
			return true
		}
	}
	return false
}

// Ready reports whether the node accepts new placements: it is alive and
// no operator state (cordon, drain, quarantine) keeps work off it.
func (n *Node) Ready() bool { return n.Status == NodeReady && n.Unschedulable() == "" }

// Copy returns a deep copy of n.
func (n *Node) Copy() *Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Labels != nil {
		c.Labels = make(map[string]string, len(n.Labels))
		for k, v := range n.Labels {
			c.Labels[k] = v
		}
	}
	c.NUMA = append([]NUMANode(nil), n.NUMA...)
	for i := range c.NUMA {
		c.NUMA[i].CPUs = append([]int(nil), n.NUMA[i].CPUs...)
	}
	c.GPUs = append([]GPU(nil), n.GPUs...)
	c.Devices = copyDevices(n.Devices)
	c.Drivers = append([]string(nil), n.Drivers...)
	c.AgentNotices = append([]string(nil), n.AgentNotices...)
	c.Downs = append([]time.Time(nil), n.Downs...)
	if n.Checkpoint != nil {
		ck := *n.Checkpoint
		ck.Drivers = append([]string(nil), ck.Drivers...)
		c.Checkpoint = &ck
	}
	if n.DynamicPorts != nil {
		r := *n.DynamicPorts
		c.DynamicPorts = &r
	}
	if n.Drain != nil {
		d := *n.Drain
		c.Drain = &d
	}
	if n.Quarantine != nil {
		q := *n.Quarantine
		c.Quarantine = &q
	}
	return &c
}
