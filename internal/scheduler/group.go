package scheduler

import (
	"slices"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/gpumodel"
)

// group is one task group compiled for placement: every replica is
// identical (an equivalence class), so requests, filters, scorers and
// reason texts are worked out once per group per plan.
type group struct {
	tg  *api.TaskGroup
	req Request

	cores     int   // whole cores to pin on one NUMA node; 0 = not pinned
	gpus      int   // whole GPUs
	gpuMilli  int64 // share of one GPU
	models    []string
	anyModel  bool // no task restricts the GPU model
	noModel   bool // the tasks' model lists have nothing in common
	require   []labelRule
	drivers   []string // the task drivers a node must offer
	filters   []filter
	scorers   []WeightedScorer
	numaText  string
	modelText string

	// modelLists are the tasks' model lists (internal/gpumodel patterns);
	// a GPU must be accepted by every one. modelSeen caches the verdicts
	// by model and memory: a cell has few distinct models.
	modelLists [][]string
	modelSeen  []modelVerdict
	// devices are the tasks' device requests (devices.go).
	devices []deviceReq

	// Relation rules (relations.go): static soft terms are scored with the
	// scorers; dynamic terms are evaluated at selection, since the plan's
	// own placements move them. keep lists workloads the group has
	// affinity to, which preemption must not evict.
	static  []term
	dynamic []term
	keep    []target
	// selects is how the group's windows hold and pick candidates,
	// chosen once when its terms are known (selection.go); coarseDomains
	// overrides how classes bucket them (strategies, tests).
	selects       selectionKind
	coarseDomains int

	stats groupStats // what the placement saw, for explanations (explanation.go)

	// readsGPUs is set when a scorer reads NodeView.GPUFree; gpuBuf is the
	// buffer it is filled in. chooser, when set, picks the GPU of a share.
	readsGPUs bool
	gpuBuf    []int64
	chooser   ShareChooser

	// tiers are the tasks accepting slow memory tiers (memtier.go).
	tiers []tierNeed

	// verdicts is the group's class in the cell's score cache, nil
	// without one; dynamicAt lists the positions of its dynamic filters
	// (scorecache.go).
	verdicts  *verdicts
	dynamicAt []int
}

func compileGroup(w *api.Workload, tg *api.TaskGroup, opts Options) *group {
	g := &group{tg: tg, require: compileRules(tg.Placement.Require), selects: selectHeap}
	res := tg.Resources()
	if tg.ExclusiveCores() {
		cores, milli := api.WholeCores(res.CPUMilli)
		g.cores = int(max(1, cores))
		res.CPUMilli = max(1000, milli)
		g.numaText = "no NUMA node with " + strconv.Itoa(g.cores) + " free cores"
	}
	g.req = Request{Workload: w, Group: tg, Resources: res}
	g.drivers = taskDrivers(tg)
	g.tiers = memoryTierNeeds(tg)
	g.gpus, g.gpuMilli = int(res.GPUs), res.GPUMilli
	g.models, g.anyModel, g.noModel = acceptableModels(tg)
	for _, t := range tg.Tasks {
		if len(t.GPUModels) > 0 {
			g.modelLists = append(g.modelLists, t.GPUModels)
		}
	}
	g.devices = compileDevices(tg)
	g.modelText = "no gpu of model " + strings.Join(g.models, "|")
	if g.noModel {
		g.modelText = "no gpu model accepted by every task"
	}

	g.filters = g.pipeline()

	g.scorers = policyFor(w, opts)(&g.req)
	for _, ws := range g.scorers {
		if gs, ok := ws.Scorer.(GPUScorer); ok && gs.ReadsGPUs() {
			g.readsGPUs = true
		}
		if ch, ok := ws.Scorer.(ShareChooser); ok && g.chooser == nil {
			g.chooser = ch
		}
	}
	if ls := newLabelScorer(tg.Placement, opts); ls != nil {
		g.scorers = append(g.scorers, WeightedScorer{Name: "labels", Scorer: ls, Weight: 1})
	}
	return g
}

// pipeline is the group's filter chain, in order: one line per stage, with
// the condition that puts it in and why it stands where it does. The
// first rejection is a node's reason, so cheap and selective stages come
// first. Hard relation filters join later, before the first capacity
// stage (relate), once the cell is known.
func (g *group) pipeline() []filter {
	gpu := g.gpus > 0 || g.gpuMilli > 0
	var chain []filter
	for _, s := range []struct {
		on bool
		f  filter
	}{
		{true, newQuotaFilter()},              // the namespace's quota: one verdict per plan change, the same on every node
		{true, readyFilter{}},                 // down nodes take nothing; one bool
		{true, eligibleFilter{}},              // cordoned, draining, quarantined: operator states; one string
		{len(g.drivers) > 0, driverFilter{}},  // the tasks' drivers (containerd…): node only
		{len(g.require) > 0, requireFilter{}}, // hard label rules: labels only
		{len(g.tiers) > 0, memTierFilter{}},   // slow memory tiers: the NUMA fingerprint only
		{true, resourceFilter{}},              // every aggregate dimension: the node's free totals
		{gpu, gpuModelFilter{}},               // fingerprint only, before any occupancy is loaded
		{g.cores > 0, numaFilter{}},           // pinned cores on one NUMA node: loads occupancy
		{gpu, gpuFitFilter{}},                 // free whole GPUs or room for the share
		{len(g.tg.Ports) > 0, portFilter{}},   // static ports free, room in the dynamic range: loads occupancy
		{len(g.devices) > 0, deviceFilter{}},  // free devices of each class asked for: loads occupancy
	} {
		if s.on {
			chain = append(chain, s.f)
		}
	}
	return chain
}

// needsDetail reports whether placing the group reads the occupancy of a
// node's cores, GPUs, ports or devices (nodeDetail), not only its free
// totals.
func (g *group) needsDetail() bool {
	return g.cores > 0 || g.gpus > 0 || g.gpuMilli > 0 || len(g.tg.Ports) > 0 || len(g.devices) > 0
}

// AcceptedGPUModels is the GPU models every task of tg accepts: the
// intersection of the tasks' model lists, or anyModel when no task
// restricts the model. An empty list without anyModel means that no model
// serves every task. Policies that reason about GPU models (fgd) read the
// group as the engine's filters do.
func AcceptedGPUModels(tg *api.TaskGroup) (models []string, anyModel bool) {
	models, anyModel, _ = acceptableModels(tg)
	return models, anyModel
}

// acceptableModels intersects the GPU model lists of the group's tasks; a
// task without a list accepts any model. Patterns are kept from the first
// list when every other list has one that overlaps it (gpumodel.Overlap:
// some GPU could satisfy both); for the GPU itself, acceptsModel asks
// every list.
func acceptableModels(tg *api.TaskGroup) (models []string, anyModel, none bool) {
	anyModel = true
	for _, t := range tg.Tasks {
		if len(t.GPUModels) == 0 {
			continue
		}
		if anyModel {
			models, anyModel = dedupe(t.GPUModels), false
			continue
		}
		kept := models[:0:0]
		for _, m := range models {
			if slices.ContainsFunc(t.GPUModels, func(o string) bool { return gpumodel.Overlap(m, o) }) {
				kept = append(kept, m)
			}
		}
		models = kept
	}
	return models, anyModel, !anyModel && len(models) == 0
}

func dedupe(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// modelVerdict is one cached answer of acceptsGPU.
type modelVerdict struct {
	model  string
	memory int64
	ok     bool
}

// acceptsGPU reports whether the GPU may serve the group: every task's
// model list accepts it by the rules of internal/gpumodel.
func (g *group) acceptsGPU(gpu *api.GPU) bool {
	if g.anyModel {
		return true
	}
	if g.noModel {
		return false
	}
	for _, v := range g.modelSeen {
		if v.model == gpu.Model && v.memory == gpu.MemoryBytes {
			return v.ok
		}
	}
	ok := true
	for _, list := range g.modelLists {
		if !gpumodel.AcceptsAny(list, gpu.Model, gpu.MemoryBytes) {
			ok = false
			break
		}
	}
	g.modelSeen = append(g.modelSeen, modelVerdict{gpu.Model, gpu.MemoryBytes, ok})
	return ok
}

// acceptsModel is acceptsGPU for a GPU whose memory is not known.
func (g *group) acceptsModel(m string) bool { return g.acceptsGPU(&api.GPU{Model: m}) }

// check runs the filter chain on node i and returns the first rejection, or
// "" when the node can take one more replica now, dynamic terms aside
// (see verdict).
func (g *group) check(c *cell, i int) string {
	_, r := g.firstReject(c, i)
	return r
}

// firstReject is check with the position of the rejecting filter (-1 when
// none rejects).
func (g *group) firstReject(c *cell, i int) (int, string) {
	if v := g.judged(c, i); v != nil {
		return g.replay(c, i, v)
	}
	return g.firstRejectOn(c, c.at(i), i)
}

// firstRejectOn is firstReject on node i in state n: the node's state in
// the plan, or a copy of it changed to ask "what if".
func (g *group) firstRejectOn(c *cell, n *nodeState, i int) (int, string) {
	for k, f := range g.filters {
		if r := f.check(g, c, n, i); r != "" {
			return k, r
		}
	}
	return -1, ""
}

// fullCheck is check followed by the dynamic terms: every reason node i
// cannot take a replica as the plan stands now.
func (g *group) fullCheck(c *cell, i int) string {
	if r := g.check(c, i); r != "" {
		return r
	}
	r, _ := g.verdict(c, i)
	return r
}

// score is the cacheable part of node i's score: the weighted sum of the
// group's scorers and static soft terms. It changes only when node i does.
func (g *group) score(c *cell, i int) float64 { return g.scoreWith(c, i, g.judged(c, i)) }

// scoreWith is score with node i's cached verdict v (nil: none).
func (g *group) scoreWith(c *cell, i int, v *verdict) float64 {
	var total float64
	switch {
	case v != nil && g.verdicts.scores:
		if !v.scored {
			// The node is pristine: scored on its snapshot state,
			// without a place in the plan.
			v.score, v.scored = g.scorersScoreOn(c, c.pristineState(i), i), true
		}
		total = v.score
	default:
		total = g.scorersScore(c, i)
	}
	for _, t := range g.static {
		total += t.score(c, i)
	}
	return total
}

// scorersScore is the weighted sum of the group's scorers on node i.
func (g *group) scorersScore(c *cell, i int) float64 { return g.scorersScoreOn(c, c.at(i), i) }

// scorersScoreOn is scorersScore on node i in state n.
func (g *group) scorersScoreOn(c *cell, n *nodeState, i int) float64 {
	view := g.viewOf(c, n, i)
	total := 0.0
	for _, ws := range g.scorers {
		total += ws.Weight * ws.Scorer.Score(&g.req, view)
	}
	return total
}

// verdict evaluates the dynamic terms on node i: the first hard one's
// rejection, or "" and the soft ones' total score.
func (g *group) verdict(c *cell, i int) (string, float64) {
	total := 0.0
	for _, t := range g.dynamic {
		if r := t.reject(c, i); r != "" {
			return r, 0
		}
		total += t.score(c, i)
	}
	return "", total
}

// view is node i as the group's scorers see it.
func (g *group) view(c *cell, i int) NodeView { return g.viewOf(c, c.at(i), i) }

// viewOf is view of node i in state n.
func (g *group) viewOf(c *cell, n *nodeState, i int) NodeView {
	v := NodeView{Node: n.node, Free: n.free, index: c.nodeIndex, slot: int32(i) + 1}
	if g.readsGPUs {
		d := c.detailOf(n, i)
		g.gpuBuf = g.gpuBuf[:0]
		for k := range d.gpuMilli {
			free := 1000 - d.gpuMilli[k]
			if d.gpuWhole[k] {
				free = 0
			}
			g.gpuBuf = append(g.gpuBuf, free)
		}
		v.GPUFree = g.gpuBuf
	}
	return v
}
