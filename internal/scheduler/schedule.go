package scheduler

import (
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
)

// State is the read-only snapshot a scheduler reads. Implementations must be
// safe for concurrent reads; Schedule never modifies what they return.
type State interface {
	Nodes() []*api.Node // every node, any status, sorted by ID
	Node(id string) *api.Node
	Workload(ns, name string) *api.Workload // nil if purged; ns "": the default namespace
	AllocsByWorkload(ns, name string) []*api.Allocation
	AllocsByNode(nodeID string) []*api.Allocation
	Index() uint64
}

// Options are the inputs of Schedule besides the snapshot and the evaluation.
// Everything that could make two runs differ comes in here.
type Options struct {
	// Seed drives the node visiting order and the allocation ids.
	Seed int64
	// IDNonce makes this attempt's allocation ids its own: the server draws
	// it at random for every attempt (and records it in the evaluation, so
	// the plan can be replayed), so a retried, re-queued or superseded
	// evaluation never names a new allocation like an existing one. The
	// scheduler never draws randomness itself.
	IDNonce uint64
	// Now stamps the new allocations' CreateTime.
	Now time.Time
	// FeasibleSample is how many feasible nodes the engine collects before it
	// picks the best of them (Borg's relaxed randomization). 0 means
	// DefaultSampleSize; a negative value scores every feasible node. A group
	// is declared not to fit only after every node was examined.
	FeasibleSample int
	// Policies adds scoring policies by SchedulingPolicy.Type, ahead of the
	// built-in binpack and spread.
	Policies map[string]Policy
	// Cell is the cell's configuration: the default policy and the time
	// windows rules may be restricted to (evaluated at Now). Nil is the
	// empty configuration.
	Cell *api.CellConfig
	// Scratch, when set, is memory the call may reuse (see Scratch); it
	// does not change the plan.
	Scratch *Scratch
}

// DefaultSampleSize is the feasible-node sample for a cell of n nodes:
// max(100, 5% of n).
func DefaultSampleSize(n int) int { return max(100, n/20) }

func (o Options) sampleSize(nodes int) int {
	switch {
	case o.FeasibleSample < 0:
		return max(nodes, 1)
	case o.FeasibleSample == 0:
		return DefaultSampleSize(nodes)
	}
	return o.FeasibleSample
}

// Schedule reconciles eval.Workload with the snapshot st and returns the plan
// that would do it. It never fails: what does not fit is reported per group
// in Plan.Failures. A replica that fits nowhere may preempt strictly
// lower-priority work (preempt.go); a gang group is placed all-or-nothing
// (gang.go).
func Schedule(st State, eval *api.Evaluation, opts Options) *api.Plan {
	return scheduleWith(st, eval, opts, strategies{})
}

// strategies are the engine's interchangeable implementations of one
// stage. Schedule uses the defaults; the differential tests build the
// alternatives directly (scheduleWith) and compare plans, so no test switch
// lives in Options.
type strategies struct {
	// placeGang, when set, replaces (*placer).placeGang: the bounded gang
	// search against an exhaustive one.
	placeGang func(p *placer, g *group, gi groupIntents) (api.GroupFailure, bool)
	// selection forces the scan (selectScan) where classes would select;
	// coarseDomains overrides how many domains a key may have for classes
	// to bucket by domain (negative: none).
	selection     selectionKind
	coarseDomains int
	// freshTallies gives every relation term a tally of its own instead
	// of sharing self tallies across the groups of a plan.
	freshTallies bool
}

func scheduleWith(st State, eval *api.Evaluation, opts Options, strat strategies) *api.Plan {
	w := st.Workload(eval.Namespace, eval.Workload)
	plan := &api.Plan{
		EvalID:        eval.ID,
		Namespace:     api.NamespaceOf(eval.Namespace),
		Workload:      eval.Workload,
		Priority:      eval.Priority,
		SnapshotIndex: st.Index(),
	}
	if w != nil {
		plan.Priority = w.Priority
	}

	allocs := slices.Clone(st.AllocsByWorkload(eval.Namespace, eval.Workload))
	slices.SortFunc(allocs, func(a, b *api.Allocation) int { return strings.Compare(a.ID, b.ID) })
	var d *api.Deployment
	if dr, ok := st.(DeploymentReader); ok && w != nil {
		d = dr.LatestDeployment(eval.Namespace, eval.Workload)
	}
	rec := reconcile(w, allocs, clusterView{node: st.Node, now: opts.Now}, d)

	c := newCellWith(st, opts.Seed, opts.Scratch)
	defer c.release()
	c.rel.fresh = strat.freshTallies
	for _, s := range rec.stops {
		c.stop(s)
	}
	p := &placer{
		cell:   c,
		w:      w,
		ids:    newIDGen(opts.Seed, evalSalt(eval.ID), opts.IDNonce),
		now:    opts.Now,
		sample: opts.sampleSize(c.size()),
	}
	for _, gi := range rec.groups {
		g := compileGroup(w, gi.group, opts)
		g.relate(c, w)
		g.useCache(c)
		g.selects, g.coarseDomains = selectionFor(g, strat.selection), strat.coarseDomains
		place := p.placeGroup
		if g.tg.Gang != nil {
			place = func(g *group, _ intentList) (api.GroupFailure, bool) {
				if strat.placeGang != nil {
					return strat.placeGang(p, g, gi)
				}
				return p.placeGang(g, gi)
			}
		}
		placed := gi.place.len()
		if f, ok := place(g, gi.place); !ok {
			plan.Failures = append(plan.Failures, f)
			placed -= f.Missing
		}
		if gi.place.len() > 0 {
			plan.Explanations = append(plan.Explanations, g.explanation(gi.place.len(), placed))
		}
	}
	plan.Place = c.placements()
	finishDeployment(plan, w, d, &rec, opts.Now)
	for _, a := range rec.inPlace {
		if !c.stopping[a.ID] {
			plan.InPlace = append(plan.InPlace, api.InPlaceUpdate{AllocID: a.ID, Version: w.Version})
		}
	}
	plan.FollowUps = followUps(eval, w, rec, opts.Now)
	if len(c.stops) > 0 {
		plan.Stop = c.stops
	}
	for _, stops := range c.stops {
		for _, s := range stops {
			if s.PreemptedBy != "" {
				plan.Preemptions++
			}
		}
	}
	return plan
}

// nodeUp reports whether allocations on a node are still alive: the node
// exists and is not down. Draining nodes keep their allocations.
func nodeUp(st State) func(id string) bool {
	return func(id string) bool {
		n := st.Node(id)
		return n != nil && n.Status != api.NodeDown
	}
}

func evalSalt(evalID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(evalID))
	return h.Sum64()
}
