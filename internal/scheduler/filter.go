package scheduler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
)

// Rejection reasons shown to users, counted per node in GroupFailure.Reasons.
const (
	reasonNotReady      = "node not ready"
	reasonGPU           = "insufficient gpu"
	reasonMixedGPU      = "gpu request mixes whole gpus and a share"
	reasonShareTooLarge = "gpu share over 1000 milli"
)

// aggregateDims are the dimensions fitted against a node's free totals
// (api.FitAggregate), in table order, and insufficient words each
// dimension's rejection: "insufficient cpu", "insufficient 2Mi huge
// pages".
var aggregateDims, insufficient = func() ([]int, []string) {
	var dims []int
	reasons := make([]string, len(api.Dimensions))
	for k, d := range api.Dimensions {
		reasons[k] = "insufficient " + d.Noun
		if d.Fit == api.FitAggregate {
			dims = append(dims, k)
		}
	}
	return dims, reasons
}()

// filter is one feasibility stage of the pipeline, and describes itself:
// the engine's bounds (gang views, preemption, explanations) ask a filter
// what it is instead of restating it in type switches, so a new filter is
// one type and one line in the pipeline (group.pipeline).
//
// check returns "" when node i of the cell, in state n, can take one more
// replica of g, or the reason it cannot (user-facing text). n is the
// node's state in the plan (c.at(i)), or a copy of it that a question
// like "and without these victims?" changed (preempt.go): filters read
// free resources and occupancy from n, never from the cell. Filters run in the
// order compileGroup lists them and the first rejection is the node's
// reason. A filter may load the node's detail but must not change any
// accounting.
type filter interface {
	// name names the filter in explanations: "ready", "gpu model",
	// "spread rack".
	name() string
	// kind says what the verdict depends on (see stageKind).
	kind() stageKind
	// key names everything check reads of the group, never empty: two
	// groups whose filters have equal keys give every node the same
	// verdict, so groups with equal static keys share a gang view
	// (gangview.go) and groups with equal keys share cached verdicts
	// (scorecache.go).
	key(g *group) string
	check(g *group, c *cell, n *nodeState, i int) string
}

// stageKind classifies a filter or relation term by what its verdict on a
// node depends on; it plays the role of Kubernetes' Unschedulable vs
// UnschedulableAndUnresolvable.
type stageKind uint8

const (
	// kindStatic reads only the node (status, labels, fingerprint) and the
	// group: its verdict is fixed for the whole plan, so gang views prune
	// by it and preemption cannot lift it.
	kindStatic stageKind = iota + 1
	// kindDynamic reads what runs or what the plan placed (relations): it
	// may change during the plan, so no view prunes by it, and preemption
	// does not try to lift it. It reads the cell, never the node's state:
	// its check is given a nil n where the score cache stands for the
	// node (scorecache.go).
	kindDynamic
	// kindCapacity reads what is free on the node: evicting lower-priority
	// work can lift it (preempt.go), and relation filters run before it.
	kindCapacity
)

func (k stageKind) String() string {
	switch k {
	case kindStatic:
		return "static"
	case kindDynamic:
		return "dynamic"
	case kindCapacity:
		return "capacity"
	}
	return "unknown"
}

// readyFilter rejects nodes whose agent is not heard from (down).
type readyFilter struct{}

func (readyFilter) name() string      { return "ready" }
func (readyFilter) kind() stageKind   { return kindStatic }
func (readyFilter) key(*group) string { return "ready" }
func (readyFilter) check(_ *group, _ *cell, n *nodeState, _ int) string {
	if !n.ready {
		return reasonNotReady
	}
	return ""
}

// eligibleFilter rejects live nodes an operator state keeps new work off:
// quarantined, draining or cordoned (ineligible), with that as the reason.
type eligibleFilter struct{}

func (eligibleFilter) name() string      { return "eligible" }
func (eligibleFilter) kind() stageKind   { return kindStatic }
func (eligibleFilter) key(*group) string { return "eligible" }
func (eligibleFilter) check(_ *group, _ *cell, n *nodeState, _ int) string {
	return n.unschedulable
}

// requireFilter enforces the group's hard label rules, in their order.
type requireFilter struct{}

func (requireFilter) name() string    { return "require" }
func (requireFilter) kind() stageKind { return kindStatic }
func (requireFilter) key(g *group) string {
	var sb strings.Builder
	sb.WriteString("require")
	for _, r := range g.require {
		fmt.Fprintf(&sb, " %q %q %q;", r.Key, r.Op, r.Values)
	}
	return sb.String()
}

func (requireFilter) check(g *group, c *cell, _ *nodeState, i int) string {
	for j := range g.require {
		if !g.require[j].matches(c, i) {
			return g.require[j].failReason
		}
	}
	return ""
}

// resourceFilter checks every aggregate dimension against what is free on
// the node after this plan's stops and placements so far.
type resourceFilter struct{}

func (resourceFilter) name() string    { return "resources" }
func (resourceFilter) kind() stageKind { return kindCapacity }
func (resourceFilter) key(g *group) string {
	return fmt.Sprintf("resources %+v", g.req.Resources)
}

func (resourceFilter) check(g *group, _ *cell, n *nodeState, _ int) string {
	want, free := &g.req.Resources, &n.free
	for _, k := range aggregateDims {
		if *want.Of(k) > *free.Of(k) {
			return insufficient[k]
		}
	}
	return ""
}

// gpuModelFilter rejects nodes with no GPU at all of an acceptable model.
// It reads only the node's fingerprint, not its occupancy.
type gpuModelFilter struct{}

func (gpuModelFilter) name() string    { return "gpu model" }
func (gpuModelFilter) kind() stageKind { return kindStatic }
func (gpuModelFilter) key(g *group) string {
	return fmt.Sprintf("model %v %v %q %q", g.anyModel, g.noModel, g.models, g.modelLists)
}

func (gpuModelFilter) check(g *group, _ *cell, n *nodeState, _ int) string {
	gpus := n.node.GPUs
	if len(gpus) == 0 {
		return reasonGPU
	}
	for k := range gpus {
		if g.acceptsGPU(&gpus[k]) {
			return ""
		}
	}
	return g.modelText
}

// numaFilter requires one NUMA node with enough whole free cores and, when
// its memory size is known, enough local memory for the group.
type numaFilter struct{}

func (numaFilter) name() string    { return "numa" }
func (numaFilter) kind() stageKind { return kindCapacity }
func (numaFilter) key(g *group) string {
	// numaFits also asks NUMA-local devices to fit.
	return fmt.Sprintf("numa %d %d %s", g.cores, g.req.Resources.MemoryBytes, devicesKey(g))
}

func (numaFilter) check(g *group, c *cell, n *nodeState, i int) string {
	if pickNUMA(g, c.detailOf(n, i)) < 0 {
		return g.numaText
	}
	return ""
}

// numaFits reports whether NUMA node nu can host the group's pinned cores.
func numaFits(g *group, d *nodeDetail, nu int) bool {
	return d.numaFree[nu] >= g.cores && d.numaMem[nu] >= g.req.Resources.MemoryBytes &&
		(len(g.devices) == 0 || !g.devicesNUMALocal() || devicesFitOn(g, d, d.node.NUMA[nu].ID))
}

// gpuFitFilter requires enough free whole GPUs of an acceptable model, or
// one acceptable GPU whose shares leave room for the group's share.
type gpuFitFilter struct{}

func (gpuFitFilter) name() string    { return "gpu" }
func (gpuFitFilter) kind() stageKind { return kindCapacity }
func (gpuFitFilter) key(g *group) string {
	return fmt.Sprintf("gpu %d %d %v %v %q %q", g.gpus, g.gpuMilli, g.anyModel, g.noModel, g.models, g.modelLists)
}

func (gpuFitFilter) check(g *group, c *cell, n *nodeState, i int) string {
	switch {
	case g.gpus > 0 && g.gpuMilli > 0:
		return reasonMixedGPU
	case g.gpuMilli > 1000:
		return reasonShareTooLarge
	}
	d := c.detailOf(n, i)
	if g.gpuMilli > 0 {
		if pickShare(g, d, -1) < 0 {
			return reasonGPU
		}
		return ""
	}
	free := 0
	for k := range d.node.GPUs {
		if d.gpuFree(k) && g.acceptsGPU(&d.node.GPUs[k]) {
			free++
		}
	}
	if free < g.gpus {
		return reasonGPU
	}
	return ""
}

// driverFilter rejects nodes that do not offer a driver the group's tasks
// need ("no driver containerd"). A node that reports no drivers offers
// api.DefaultDrivers (exec, mock), so cells of older agents, the simulator
// and the benchmarks place as before.
type driverFilter struct{}

func (driverFilter) name() string    { return "driver" }
func (driverFilter) kind() stageKind { return kindStatic }
func (driverFilter) key(g *group) string {
	return "driver " + strings.Join(g.drivers, ",")
}

func (driverFilter) check(g *group, _ *cell, n *nodeState, _ int) string {
	for _, d := range g.drivers {
		if !n.node.HasDriver(d) {
			return "no driver " + d
		}
	}
	return ""
}

// taskDrivers lists, sorted and once each, the drivers the group's tasks
// need ("" is exec).
func taskDrivers(tg *api.TaskGroup) []string {
	var out []string
	for _, t := range tg.Tasks {
		d := t.Driver
		if d == "" {
			d = "exec"
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}
