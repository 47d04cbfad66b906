package scheduler

import (
	"strconv"
	"strings"

	"github.com/strata-dev/strata/api"
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
	filters   []filter
	scorers   []WeightedScorer
	numaText  string
	modelText string
}

func compileGroup(w *api.Workload, tg *api.TaskGroup, policies map[string]Policy) *group {
	g := &group{tg: tg, require: compileRules(tg.Placement.Require)}
	res := tg.Resources()
	if tg.ExclusiveCores() {
		g.cores = int(max(1, (res.CPUMilli+999)/1000))
		res.CPUMilli = int64(g.cores) * 1000
		g.numaText = "no NUMA node with " + strconv.Itoa(g.cores) + " free cores"
	}
	g.req = Request{Workload: w, Group: tg, Resources: res}
	g.gpus, g.gpuMilli = int(res.GPUs), res.GPUMilli
	g.models, g.anyModel, g.noModel = acceptableModels(tg)
	g.modelText = "no gpu of model " + strings.Join(g.models, "|")
	if g.noModel {
		g.modelText = "no gpu model accepted by every task"
	}

	g.filters = []filter{readyFilter{}}
	if len(g.require) > 0 {
		g.filters = append(g.filters, requireFilter{})
	}
	g.filters = append(g.filters, resourceFilter{})
	if g.gpus > 0 || g.gpuMilli > 0 {
		g.filters = append(g.filters, gpuModelFilter{})
	}
	if g.cores > 0 {
		g.filters = append(g.filters, numaFilter{})
	}
	if g.gpus > 0 || g.gpuMilli > 0 {
		g.filters = append(g.filters, gpuFitFilter{})
	}

	g.scorers = policyFor(w, policies)(&g.req)
	if len(tg.Placement.Prefer)+len(tg.Placement.Avoid) > 0 {
		g.scorers = append(g.scorers, WeightedScorer{Scorer: newLabelScorer(tg.Placement), Weight: 1})
	}
	return g
}

// acceptableModels intersects the GPU model lists of the group's tasks; a
// task without a list accepts any model.
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
			if contains(t.GPUModels, m) {
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

// acceptsModel reports whether a GPU of model m may serve the group.
func (g *group) acceptsModel(m string) bool {
	return g.anyModel || (!g.noModel && contains(g.models, m))
}

// check runs the filter chain on node i and returns the first rejection, or
// "" when the node can take one more replica now.
func (g *group) check(c *cell, i int) string {
	for _, f := range g.filters {
		if r := f.check(g, c, i); r != "" {
			return r
		}
	}
	return ""
}

// score is the weighted sum of the group's scorers for node i.
func (g *group) score(n *nodeState) float64 {
	view := NodeView{Node: n.node, Free: n.free, index: n.ix, slot: n.index + 1}
	total := 0.0
	for _, ws := range g.scorers {
		total += ws.Weight * ws.Scorer.Score(&g.req, view)
	}
	return total
}
