package server

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fieldpath"
	"github.com/strata-dev/strata/internal/resources"
	"github.com/strata-dev/strata/internal/spec"
)

// The checks of what agents send: a node's registration and allocation
// reports. An agent is a program, not a person, but a buggy or hostile one
// must not be able to store what the rest of the cell cannot handle
// (invariant 6): ids that become paths, capacities whose sums wrap, nil
// task states that crash a copy.

// Bounds of what one node may declare, beyond the resource limits.
const (
	maxNUMANodes  = 1024
	maxNodeCPUID  = 1 << 20 // CPU ids are small dense integers
	maxTextBytes  = 4096    // reasons, messages, GPU models and ids
	maxAddrBytes  = 512
	maxTaskSignal = 128
	// maxAgentNotices bounds the events one registration may add.
	maxAgentNotices = 64
)

// fieldErrors collects problems with field paths.
type fieldErrors []api.FieldError

func (f *fieldErrors) add(path, format string, args ...any) {
	*f = append(*f, api.FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// check adds problem at path unless it is "".
func (f *fieldErrors) check(path, problem string) {
	if problem != "" {
		f.add(path, "%s", problem)
	}
}

// checkText refuses text a log line or a terminal could misread: NUL and
// other control bytes except tab and newline, and more than max bytes.
func checkText(s string, max int) string {
	if len(s) > max {
		return fmt.Sprintf("is %d bytes long, more than %d", len(s), max)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return fmt.Sprintf("must not contain control byte %#02x (at byte %d)", c, i)
		}
	}
	return ""
}

// maxNodeDrivers bounds the task drivers one node may advertise.
const maxNodeDrivers = 32

func validateNode(n *api.Node) error {
	var f fieldErrors
	f.check("id", spec.CheckID(n.ID))
	f.check("name", spec.CheckID(n.Name))
	f.check("httpAddr", checkAgentAddr(n.HTTPAddr))
	if c := n.Checkpoint; c != nil {
		f.check("checkpoint.tool", checkText(c.Tool, maxTextBytes))
		f.check("checkpoint.reason", checkText(c.Reason, maxTextBytes))
	}
	for _, k := range slices.Sorted(maps.Keys(n.Labels)) { // problems in a stable order
		v := n.Labels[k]
		p := fieldpath.Join("labels", k)
		if problem := spec.CheckLabelKey(k); problem != "" {
			f.add(p, "%s", problem)
			continue
		}
		f.check(p, spec.CheckLabelValue(v))
	}
	c := n.Capacity
	for _, v := range resources.OutOfRange(c) {
		f.add("capacity."+v.Field, "%s", v.Problem)
	}
	if c.CPUMilli == 0 {
		f.add("capacity.cpuMilli", "must be positive")
	}
	for _, d := range resources.HugePageDims {
		if v := d.Limit.Of(c); v%d.Size != 0 {
			f.add("capacity."+d.Limit.Field, "must be a whole number of %s pages, got %s", resources.FormatBytes(d.Size), resources.FormatBytes(v))
		}
	}
	for k, d := range api.Dimensions {
		if !d.Capacity && c.Get(k) != 0 {
			f.add("capacity."+d.Field, "must be 0: a node offers whole %ss, and shares are cut from them", strings.ToUpper(d.Share.Of))
		}
	}
	if r := n.DynamicPorts; r != nil {
		f.check("dynamicPorts", r.Problem())
	}
	validateNUMA(&f, n.NUMA)
	validateGPUs(&f, n.GPUs, c.GPUs)
	validateDevices(&f, n.Devices)
	if len(n.Drivers) > maxNodeDrivers {
		f.add("drivers", "%d drivers, more than %d", len(n.Drivers), maxNodeDrivers)
	} else {
		for i, d := range n.Drivers {
			f.check(fieldpath.Index("drivers", i), spec.CheckID(d))
		}
	}
	if len(n.AgentNotices) > maxAgentNotices {
		f.add("agentNotices", "%d notices, more than %d", len(n.AgentNotices), maxAgentNotices)
	}
	for i, text := range n.AgentNotices {
		f.check(fieldpath.Index("agentNotices", i), checkText(text, maxTextBytes))
	}
	if len(f) == 0 {
		return nil
	}
	return invalid("invalid-node", f)
}

// checkAgentAddr accepts an empty address or an http(s) URL with a host:
// the server dials it to stream logs.
func checkAgentAddr(addr string) string {
	if addr == "" {
		return ""
	}
	if len(addr) > maxAddrBytes {
		return fmt.Sprintf("is %d bytes long, more than %d", len(addr), maxAddrBytes)
	}
	u, err := url.Parse(addr)
	switch {
	case err != nil:
		return fmt.Sprintf("not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("want an http:// or https:// URL, got scheme %q", u.Scheme)
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return "want scheme://host:port and nothing else"
	}
	return ""
}

func validateNUMA(f *fieldErrors, numa []api.NUMANode) {
	if len(numa) > maxNUMANodes {
		f.add("numa", "%d NUMA nodes, more than %d", len(numa), maxNUMANodes)
		return
	}
	ids, cpus := map[int]bool{}, map[int]bool{}
	for i, nu := range numa {
		p := fieldpath.Index("numa", i)
		switch {
		case nu.ID < 0 || nu.ID >= maxNUMANodes:
			f.add(p+".id", "must be between 0 and %d, got %d", maxNUMANodes-1, nu.ID)
		case ids[nu.ID]:
			f.add(p+".id", "NUMA node %d listed twice", nu.ID)
		}
		ids[nu.ID] = true
		f.check(p+".memoryBytes", resources.MemoryLimit.Check(nu.MemoryBytes))
		if nu.Tier != "" && !api.AcceptsTier(api.MemoryTiers, nu.Tier) {
			f.add(p+".tier", "unknown memory tier %.64q (want %s, or empty for standard)", nu.Tier, api.MemoryTiers)
		}
		for j, cpu := range nu.CPUs {
			cp := fieldpath.Index(p+".cpus", j)
			switch {
			case cpu < 0 || cpu >= maxNodeCPUID:
				f.add(cp, "must be between 0 and %d, got %d", maxNodeCPUID-1, cpu)
			case cpus[cpu]:
				f.add(cp, "cpu %d listed twice", cpu)
			}
			cpus[cpu] = true
		}
	}
}

func validateGPUs(f *fieldErrors, gpus []api.GPU, capacity int64) {
	if len(gpus) > 0 && int64(len(gpus)) != capacity {
		f.add("gpus", "lists %d GPUs but capacity.gpus is %d", len(gpus), capacity)
	}
	seen := map[string]bool{}
	for i, g := range gpus {
		p := fieldpath.Index("gpus", i)
		switch {
		case g.ID == "":
			f.add(p+".id", "required")
		case checkText(g.ID, 128) != "":
			f.add(p+".id", "%s", checkText(g.ID, 128))
		case seen[g.ID]:
			f.add(p+".id", "GPU %q listed twice", g.ID)
		}
		seen[g.ID] = true
		f.check(p+".model", checkText(g.Model, 128))
		f.check(p+".memoryBytes", resources.MemoryLimit.Check(g.MemoryBytes))
		if g.NUMA < -1 || g.NUMA >= maxNUMANodes {
			f.add(p+".numa", "must be -1 (unknown) or a NUMA node id, got %d", g.NUMA)
		}
	}
}

type allocUpdatesRequest struct {
	Updates []*api.AllocUpdate `json:"updates"`
}

// agentClientStatuses are the client statuses an agent may report; lost is
// the server's to set.
var agentClientStatuses = []string{api.AllocPending, api.AllocRunning, api.AllocComplete, api.AllocFailed}

var taskStates = []string{api.TaskPending, api.TaskRunning, api.TaskDead}

// validateAllocUpdates checks an agent's report before any of it is
// looked up: a list (not null), each update an allocation id once, a
// status an agent may report, task states keyed by task names.
func validateAllocUpdates(req *allocUpdatesRequest) error {
	var f fieldErrors
	if req.Updates == nil {
		f.add("updates", "required: a list of allocation updates")
	}
	seen := map[string]int{}
	for i, u := range req.Updates {
		p := fieldpath.Index("updates", i)
		if u == nil {
			f.add(p, "expected an update, got null")
			continue
		}
		if problem := spec.CheckID(u.ID); problem != "" {
			f.add(p+".id", "%s", problem)
		} else if first, dup := seen[u.ID]; dup {
			f.add(p+".id", "allocation %s is already reported by updates[%d]", u.ID, first)
		} else {
			seen[u.ID] = i
		}
		if !oneOf(u.ClientStatus, agentClientStatuses) {
			f.add(p+".clientStatus", "unknown status %.64q (want %s)", u.ClientStatus, strings.Join(agentClientStatuses, ", "))
		}
		f.check(p+".clientReason", checkText(u.ClientReason, maxTextBytes))
		validateHealth(&f, p+".health", u.Health)
		for _, name := range slices.Sorted(maps.Keys(u.TaskStates)) {
			validateTaskState(&f, fieldpath.Join(p+".taskStates", name), name, u.TaskStates[name])
		}
	}
	if len(f) == 0 {
		return nil
	}
	return invalid("invalid-alloc-update", f)
}

func validateTaskState(f *fieldErrors, p, name string, ts *api.TaskState) {
	if problem := spec.CheckName(name); problem != "" {
		f.add(p, "not a task name: %s", problem)
		return
	}
	if ts == nil {
		f.add(p, "expected a task state, got null")
		return
	}
	if !oneOf(ts.State, taskStates) {
		f.add(p+".state", "unknown task state %.64q (want %s)", ts.State, strings.Join(taskStates, ", "))
	}
	if ts.PID < 0 {
		f.add(p+".pid", "must not be negative, got %d", ts.PID)
	}
	if ts.Restarts < 0 {
		f.add(p+".restarts", "must not be negative, got %d", ts.Restarts)
	}
	if ts.Signal < 0 || ts.Signal > maxTaskSignal {
		f.add(p+".signal", "must be between 0 and %d, got %d", maxTaskSignal, ts.Signal)
	}
	f.check(p+".message", checkText(ts.Message, maxTextBytes))
}

func oneOf(s string, choices []string) bool { return slices.Contains(choices, s) }
