package leader

import (
	"fmt"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/incident"
	"github.com/strata-dev/strata/internal/state"
)

// The incident engine reads the cell as signals: pieces of trouble with
// the attributes their subject shares with others (docs/incidents.md).
// This file turns the state's events, and what changed in the allocations'
// task states since the last pass (restarts and OOM kills have no events),
// into signals, and counts the cell's population into a census.

// infraLabels are the node labels that are causes of the machine room;
// each is a key of incident.DefaultKeys.
var infraLabels = []string{api.LabelRack, api.LabelSwitch, api.LabelPowerZone, api.LabelRow, api.LabelZone}

// describer gives the attributes of allocations and nodes from one
// snapshot.
type describer struct {
	snap *state.Snapshot
	// deployments maps a workload's version ("ns/name@v3") to the
	// deployment that rolled it out; nodes and versions keep the
	// attributes of nodes and of a workload's versions: all filled as
	// asked, so that a census of 100,000 allocations builds each once.
	deployments map[string]string
	nodes       map[string][]incident.Attr
	versions    map[versionKey][]incident.Attr
}

type versionKey struct {
	ns, workload string
	version      uint64
	driver       string
}

func newDescriber(snap *state.Snapshot) *describer {
	return &describer{snap: snap, deployments: map[string]string{}, nodes: map[string][]incident.Attr{}, versions: map[versionKey][]incident.Attr{}}
}

// nodeAttrs are a node's name and infrastructure labels.
func nodeAttrs(n *api.Node) []incident.Attr {
	out := []incident.Attr{{Key: incident.KeyNode, Value: n.Name}}
	for _, k := range infraLabels {
		if v := n.Labels[k]; v != "" {
			out = append(out, incident.Attr{Key: k, Value: v})
		}
	}
	return out
}

// versionOf names a workload's version: "ns/name@v3".
func versionOf(ns, workload string, version uint64) string {
	return fmt.Sprintf("%s@v%d", fsm.Qualified(ns, workload), version)
}

// allocAttrs are what an allocation shares with others: its node and the
// node's domains, its workload, version, deployment and driver.
func (d *describer) allocAttrs(a *api.Allocation) []incident.Attr {
	node, ok := d.nodes[a.NodeID]
	if !ok {
		if n := d.snap.Node(a.NodeID); n != nil {
			node = nodeAttrs(n)
		} else if a.NodeName != "" {
			node = []incident.Attr{{Key: incident.KeyNode, Value: a.NodeName}}
		}
		d.nodes[a.NodeID] = node
	}
	key := versionKey{ns: a.Namespace, workload: a.Workload, version: a.WorkloadVersion}
	if a.TaskGroup != nil && len(a.TaskGroup.Tasks) > 0 && a.TaskGroup.Tasks[0] != nil {
		key.driver = a.TaskGroup.Tasks[0].Driver
		if key.driver == "" {
			key.driver = "exec"
		}
	}
	version, ok := d.versions[key]
	if !ok {
		version = []incident.Attr{{Key: incident.KeyWorkload, Value: fsm.Qualified(a.Namespace, a.Workload)},
			{Key: incident.KeyVersion, Value: versionOf(a.Namespace, a.Workload, a.WorkloadVersion)}}
		if id := d.deployment(a.Namespace, a.Workload, a.WorkloadVersion); id != "" {
			version = append(version, incident.Attr{Key: incident.KeyDeployment, Value: id})
		}
		if key.driver != "" {
			version = append(version, incident.Attr{Key: incident.KeyDriver, Value: key.driver})
		}
		d.versions[key] = version
	}
	out := make([]incident.Attr, 0, len(node)+len(version))
	return append(append(out, node...), version...)
}

// deployment is the ID of the deployment that rolled out a version, "" if
// none did (the first version, an in-place change).
func (d *describer) deployment(ns, workload string, version uint64) string {
	key := versionOf(ns, workload, version)
	if id, ok := d.deployments[key]; ok {
		return id
	}
	id := ""
	for _, dep := range d.snap.DeploymentsByWorkload(nil, ns, workload) {
		if dep.Version == version {
			id = dep.ID
		}
	}
	d.deployments[key] = id
	return id
}

// allocSignal is a signal about an allocation.
func (d *describer) allocSignal(a *api.Allocation, k incident.Kind, at time.Time, ref string) incident.Signal {
	return incident.Signal{Time: at, Kind: k, Subject: a.ID, Attrs: d.allocAttrs(a), Ref: ref}
}

// eventSignal is the signal an event is, if it is trouble.
func (d *describer) eventSignal(e *api.Event) (incident.Signal, bool) {
	switch e.Type {
	case api.EventAllocFailed, api.EventCheck, api.EventAllocHealth:
		a := d.snap.Alloc(e.AllocID)
		if a == nil {
			return incident.Signal{}, false // collected since
		}
		kind := incident.Failed
		switch {
		case e.Type == api.EventCheck && strings.Contains(e.Message, " is "+api.CheckFailing+":"):
			kind = incident.CheckFailing
		case e.Type == api.EventAllocHealth && strings.Contains(e.Message, " is "+api.HealthUnhealthy):
			kind = incident.Unhealthy
		case e.Type != api.EventAllocFailed:
			return incident.Signal{}, false // a check passing, an allocation turning healthy
		case oomKilled(a):
			kind = incident.OOMKilled
		}
		return d.allocSignal(a, kind, e.Time, e.ID), true
	case api.EventNodeDown:
		n := d.snap.Node(e.NodeID)
		if n == nil {
			return incident.Signal{}, false
		}
		return incident.Signal{Time: e.Time, Kind: incident.NodeDown, Subject: n.Name, Attrs: nodeAttrs(n), Ref: e.ID}, true
	case api.EventUnplaceable:
		attrs := []incident.Attr{{Key: incident.KeyWorkload, Value: fsm.Qualified(e.Namespace, e.Workload)}}
		if w := d.snap.Workload(e.Namespace, e.Workload); w != nil {
			attrs = append(attrs, incident.Attr{Key: incident.KeyVersion, Value: versionOf(e.Namespace, e.Workload, w.Version)})
		}
		return incident.Signal{Time: e.Time, Kind: incident.SlowPlacement, Subject: fsm.Qualified(e.Namespace, e.Workload), Attrs: attrs, Ref: e.ID}, true
	}
	return incident.Signal{}, false
}

func oomKilled(a *api.Allocation) bool {
	for _, ts := range a.TaskStates {
		if ts != nil && ts.OOMKilled {
			return true
		}
	}
	return false
}

// taskSeen is what the last pass saw of an allocation's tasks.
type taskSeen struct {
	restarts int
	oom      bool
	status   string
}

func seenOf(a *api.Allocation) taskSeen {
	s := taskSeen{oom: oomKilled(a), status: a.ClientStatus}
	for _, ts := range a.TaskStates {
		if ts != nil {
			s.restarts += ts.Restarts
		}
	}
	return s
}

// changeSignals are the signals of what changed in an allocation since
// the last pass saw it: tasks that restarted (OOM-killed, when the kill
// is new), and the allocation lost with its node.
func (d *describer) changeSignals(a *api.Allocation, was, now taskSeen, at time.Time) []incident.Signal {
	var out []incident.Signal
	if now.restarts > was.restarts {
		kind := incident.Restarted
		if now.oom && !was.oom {
			kind = incident.OOMKilled
		}
		out = append(out, d.allocSignal(a, kind, at, ""))
	}
	if now.status == api.AllocLost && was.status != api.AllocLost {
		out = append(out, d.allocSignal(a, incident.Lost, at, ""))
	}
	return out
}

// census counts the cell's allocations — live ones, and those that ended
// since (the troubled are part of the population they are judged
// against) — and the nodes that are not down, by attribute.
func (d *describer) census(since time.Time) *incident.Census {
	c := incident.NewCensus()
	for _, n := range d.snap.Nodes() {
		if n.Status != api.NodeDown {
			c.Add(incident.UnitNode, nodeAttrs(n)...)
		}
	}
	for _, a := range d.snap.Allocs(nil) {
		if !a.Terminal() || !a.ClientStatusTime.Before(since) {
			c.Add(incident.UnitAlloc, d.allocAttrs(a)...)
		}
	}
	for _, w := range d.snap.Workloads(nil) {
		if !w.Stopped {
			c.Add(incident.UnitPlacement, incident.Attr{Key: incident.KeyWorkload, Value: fsm.Qualified(w.Namespace, w.Name)},
				incident.Attr{Key: incident.KeyVersion, Value: versionOf(w.Namespace, w.Name, w.Version)})
		}
	}
	return c
}
