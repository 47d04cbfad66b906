package schedplacer

import (
	"fmt"
	"strconv"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/planapply"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/scheduler/fgd"
	"github.com/strata-dev/strata/internal/sim/cluster"
	simfrag "github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Placer places each pod by running scheduler.Schedule on a view of the
// cluster. The view is kept up to date from the cluster's change log: a
// node is translated again only after it changed, into the same objects
// (the scheduler only reads them during a call). The scheduler gets a
// NodeIndex of the (fixed) node list and a Scratch it reuses from call to
// call, so that a call costs what the scheduler's sampling costs, not a
// translation of the cell.
type Placer struct {
	policy string
	seed   int64
	sample int
	calls  int64

	nodes   []*api.Node
	allocs  [][]*api.Allocation
	names   []allocNames // of each node's allocations
	ids     map[string]int
	cursor  uint64 // of the cluster's change log
	index   *scheduler.NodeIndex
	scratch scheduler.Scratch
	wl      *api.Workload
	last    *api.Plan // of the latest Place, for Explain
	hidden  []int     // nodes shown as draining for the current pod
	// versions counts each node's translations (and its hiding), so
	// that the scheduler keeps verdicts and scores of the nodes that did
	// not change (scheduler.NodeVersioner); epoch names the node list
	// they count for.
	versions []uint64
	epoch    *int

	// target is the trace the fgd policy measures fragmentation against;
	// policies is built from it and the cluster on the first Place.
	target   []trace.Pod
	policies map[string]scheduler.Policy
	// forecast, when set, is each node's forecast (forecasts.go).
	forecast func(node int) (api.NodeForecast, bool)
}

var (
	_ cluster.Placer          = (*Placer)(nil)
	_ cluster.Explainer       = (*Placer)(nil)
	_ scheduler.NodeIndexer   = (*Placer)(nil)
	_ scheduler.NodeVersioner = (*Placer)(nil)
	_ planapply.View          = (*Placer)(nil)
)

// New returns a placer that schedules with policy (a scheduler policy type:
// binpack or spread). sample is scheduler.Options.FeasibleSample (0: the
// server's default sampling; negative: score every feasible node).
func New(policy string, seed int64, sample int) *Placer {
	p := &Placer{policy: policy, seed: seed, sample: sample}
	// A trace's pods come in hundreds of classes (a Google part: about
	// 300 distinct requests), each revisited often: keep the verdicts of
	// all of them (at most ~100 MiB on the 12,580 machines of the Google
	// cell) rather than judge a class's nodes again after evicting it.
	p.scratch.CachedVerdicts = 1 << 22
	return p
}

// WithTarget sets the workload the fgd policy measures fragmentation
// against (the trace's pods, as the paper's FGD uses) and returns p.
func (p *Placer) WithTarget(pods []trace.Pod) *Placer {
	p.target = pods
	return p
}

// fgdConfig is the scheduler's fgd policy configured like the simulator's
// FGD+: the trace's shapes cut at 95%, r from its GPU pods, the cluster's
// models and largest node.
func fgdConfig(c *cluster.Cluster, pods []trace.Pod) *fgd.Config {
	m := c.MaxNode()
	return fgd.NewConfig(simfrag.Shapes(pods), c.Models(), m.CPUMilli, m.GPUMilli)
}

// Place implements cluster.Placer.
func (p *Placer) Place(c *cluster.Cluster, pod *trace.Pod) (cluster.Placement, bool) {
	pls := p.PlaceAll(c, []*trace.Pod{pod})
	if len(pls) == 0 {
		return cluster.Placement{}, false
	}
	return pls[0], true
}

// PlaceAll implements cluster.BatchPlacer: the pods (of one request, as
// the simulator's wait queue hands them over: a job's tasks submitted
// together) are one workload of that many replicas, scheduled in one
// evaluation as the server would. A node where the pods would break their
// job's different-machine constraint is shown to the scheduler as
// draining (it takes no new work) for this call, and replicas of pods with
// the constraint keep off each other's nodes (a hard anti-affinity on the
// node key).
func (p *Placer) PlaceAll(c *cluster.Cluster, pods []*trace.Pod) []cluster.Placement {
	if len(pods) == 0 {
		return nil
	}
	p.sync(c)
	if p.policies == nil {
		p.policies = p.policiesFor(c)
	}
	first := pods[0]
	if ex := c.Excluder(first); ex != nil {
		for i := range p.nodes {
			if p.nodes[i].Status == api.NodeReady && ex(i) {
				p.nodes[i].Status = api.NodeDraining
				p.versions[i]++
				p.hidden = append(p.hidden, i)
			}
		}
		defer p.unhide()
	}
	p.wl = workloadFor(first, p.policy, len(pods))
	p.calls++
	eval := &api.Evaluation{ID: "sim-" + strconv.FormatInt(p.calls, 10), Workload: p.wl.Name, Status: api.EvalPending}
	plan := scheduler.Schedule(p, eval, scheduler.Options{Seed: p.seed + p.calls, Now: time.Unix(0, 0), FeasibleSample: p.sample,
		Policies: p.policies, Scratch: &p.scratch})
	p.last = plan
	// Commit through the server's plan-applier rules, as the server would.
	d := planapply.Decide(p, plan)
	byIndex := make([]*api.Allocation, len(pods))
	for _, id := range d.Committed {
		for _, a := range plan.Place[id] {
			if a.Index >= 0 && a.Index < len(pods) {
				byIndex[a.Index] = a
			}
		}
	}
	var out []cluster.Placement
	for k, a := range byIndex {
		if a == nil {
			break // replicas are placed in index order: the rest did not fit
		}
		var gpus cluster.GPUSet
		for _, g := range a.Assignment.GPUs {
			idx, err := strconv.Atoi(g)
			if err != nil {
				return out
			}
			gpus = gpus.With(idx)
		}
		out = append(out, cluster.PlacementFor(p.ids[a.NodeID], pods[k], gpus))
	}
	return out
}

func (p *Placer) unhide() {
	for _, i := range p.hidden {
		p.nodes[i].Status = api.NodeReady
		p.versions[i]++
	}
	p.hidden = p.hidden[:0]
}

// sync refreshes the translated nodes the cluster changed since the last
// call (all of them on the first call).
func (p *Placer) sync(c *cluster.Cluster) {
	if len(p.nodes) != c.NumNodes() {
		n := c.NumNodes()
		p.nodes, p.allocs, p.names = make([]*api.Node, n), make([][]*api.Allocation, n), make([]allocNames, n)
		p.ids = make(map[string]int, n)
		p.versions, p.epoch = make([]uint64, n), new(int)
		for i := range p.nodes {
			id := fmt.Sprintf("sim-%06d", i)
			// The node label is each node's own topology domain: the
			// different-machine constraint is an anti-affinity on it.
			p.nodes[i] = &api.Node{ID: id, Labels: map[string]string{nodeKey: id}}
			p.ids[p.nodes[i].ID] = i
			translate(p.nodes[i], &p.allocs[i], &p.names[i], c.Node(i))
		}
		p.index, p.cursor = scheduler.NewNodeIndex(p.nodes), c.ChangeCursor()
		return
	}
	changed, next, complete := c.Changes(p.cursor)
	if !complete {
		for i := range p.nodes {
			translate(p.nodes[i], &p.allocs[i], &p.names[i], c.Node(i))
			p.versions[i]++
		}
	}
	for _, i := range changed {
		translate(p.nodes[i], &p.allocs[i], &p.names[i], c.Node(int(i)))
		p.versions[i]++
	}
	p.cursor = next
}

// translate writes the api view of one simulated node into n and allocs:
// capacity, what is allocated, its GPUs, and one allocation per GPU in use
// so the scheduler knows each GPU's occupancy. The allocation objects of
// earlier translations are written over (the scheduler only reads them
// during a call, and keeps nothing of them across calls), so a cell
// translated pod after pod makes no garbage.
func translate(n *api.Node, allocs *[]*api.Allocation, names *allocNames, ns *cluster.NodeState) {
	id := n.ID
	status := api.NodeReady
	if !ns.Up {
		status = api.NodeDown
	}
	*n = api.Node{ID: id, Name: ns.Name, Status: status, GPUs: n.GPUs[:0], Labels: n.Labels,
		Capacity:  api.Resources{CPUMilli: ns.CPUCap, MemoryBytes: ns.MemCap << 20, GPUs: int64(len(ns.GPUFree))},
		Allocated: api.Resources{CPUMilli: ns.CPUCap - ns.CPUFree, MemoryBytes: (ns.MemCap - ns.MemFree) << 20}}
	kept := *allocs
	*allocs = kept[:0]
	next := func(allocID string) *api.Allocation {
		k := len(*allocs)
		var a *api.Allocation
		if k < cap(kept) && kept[:cap(kept)][k] != nil {
			a = kept[:cap(kept)][k]
			a.ID = allocID
		} else {
			a = &api.Allocation{ID: allocID}
		}
		*allocs = append(*allocs, a)
		return a
	}
	for g, free := range ns.GPUFree {
		gid := gpuID(g)
		n.GPUs = append(n.GPUs, api.GPU{ID: gid, Model: ns.Model, NUMA: -1})
		used := 1000 - free
		switch {
		case used <= 0:
			continue
		case free == 0:
			n.Allocated.GPUs++
			a := next(names.gpu(id, g))
			*a = api.Allocation{ID: a.ID, NodeID: id, DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning,
				Resources: api.Resources{GPUs: 1}, Assignment: api.Assignment{NUMANode: -1, GPUs: reuse(a.Assignment.GPUs, gid)}}
		default:
			n.Allocated.GPUMilli += used
			a := next(names.gpu(id, g))
			*a = api.Allocation{ID: a.ID, NodeID: id, DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning,
				Resources: api.Resources{GPUMilli: used}, Assignment: api.Assignment{NUMANode: -1, GPUs: reuse(a.Assignment.GPUs, gid), GPUMilli: used}}
		}
	}
	// What the pods hold of CPU and memory, as one allocation, so that the
	// plan applier's rules see the node's occupancy in its allocations as
	// they do in the server's store.
	if cpu, mem := ns.CPUCap-ns.CPUFree, (ns.MemCap-ns.MemFree)<<20; cpu > 0 || mem > 0 {
		a := next(names.pods(id))
		*a = api.Allocation{ID: a.ID, NodeID: id, DesiredStatus: api.DesiredRun,
			ClientStatus: api.AllocRunning, Resources: api.Resources{CPUMilli: cpu, MemoryBytes: mem}, Assignment: api.Assignment{NUMANode: -1}}
	}
}

// allocNames are the ids of one node's synthetic allocations, made on
// first use.
type allocNames struct {
	gpus   []string
	podsID string
}

// gpu is the id of the allocation that holds GPU g of node id.
func (a *allocNames) gpu(id string, g int) string {
	for len(a.gpus) <= g {
		a.gpus = append(a.gpus, id+"-gpu"+gpuID(len(a.gpus)))
	}
	return a.gpus[g]
}

// pods is the id of the allocation that holds what node id's pods hold.
func (a *allocNames) pods(id string) string {
	if a.podsID == "" {
		a.podsID = id + "-pods"
	}
	return a.podsID
}

// gpuIDs are the GPU ids of a node, "0" to "15", made once.
var gpuIDs = func() []string {
	ids := make([]string, 16)
	for g := range ids {
		ids[g] = strconv.Itoa(g)
	}
	return ids
}()

// gpuID is GPU g's id.
func gpuID(g int) string {
	if g < len(gpuIDs) {
		return gpuIDs[g]
	}
	return strconv.Itoa(g)
}

// reuse returns a one-id list of id in ids' memory.
func reuse(ids []string, id string) []string {
	if cap(ids) == 0 {
		return []string{id}
	}
	return append(ids[:0], id)
}

// nodeKey is the topology label naming each node.
const nodeKey = "node"

// workloadFor is the workload of replicas pods with pod's request.
func workloadFor(pod *trace.Pod, policy string, replicas int) *api.Workload {
	t := &api.Task{Name: "pod", Driver: "mock", Command: []string{"sim"},
		Resources: api.Resources{CPUMilli: pod.CPUMilli, MemoryBytes: pod.MemoryMiB << 20}, GPUModels: pod.GPUSpec}
	if pod.IsShare() {
		t.Resources.GPUMilli = pod.PerGPUMilli()
	} else {
		t.Resources.GPUs = int64(pod.NumGPU)
	}
	g := &api.TaskGroup{Name: "pod", Replicas: replicas, Tasks: []*api.Task{t}}
	if pod.DistinctNode {
		g.Placement.AntiAffinity = []api.AffinityRule{{Key: nodeKey, Mode: api.ModeHard}}
	}
	return &api.Workload{Name: pod.Name, Version: 1, SchedulingPolicy: api.SchedulingPolicy{Type: policy},
		Groups: []*api.TaskGroup{g}}
}

// scheduler.State over the translated view.

func (p *Placer) Nodes() []*api.Node { return p.nodes }

func (p *Placer) Node(id string) *api.Node {
	if i, ok := p.ids[id]; ok {
		return p.nodes[i]
	}
	return nil
}

func (p *Placer) Workload(_, name string) *api.Workload { // one namespace
	if p.wl != nil && p.wl.Name == name {
		return p.wl
	}
	return nil
}

func (p *Placer) AllocsByWorkload(_, _ string) []*api.Allocation { return nil }

func (p *Placer) AllocsByNode(id string) []*api.Allocation {
	if i, ok := p.ids[id]; ok {
		return p.allocs[i]
	}
	return nil
}

func (p *Placer) Index() uint64 { return uint64(p.calls) }

// Alloc implements planapply.View: the view keeps no allocation by id
// beyond the occupancy it translates, so a placement's id is only checked
// against the plan's other placements.
func (p *Placer) Alloc(string) *api.Allocation { return nil }

// NodeVersions implements scheduler.NodeVersioner: a node's version moves
// with every translation of it (the cluster changed it) and when it is
// shown draining for one pod and back.
func (p *Placer) NodeVersions() (any, []uint64) { return p.epoch, p.versions }

// NodeIndex implements scheduler.NodeIndexer: the node list never changes
// (nodes are translated in place) and neither do its labels.
func (p *Placer) NodeIndex() *scheduler.NodeIndex { return p.index }

// Explain implements cluster.Explainer with the scheduler's own
// explanation of the latest plan: the chosen node's score components.
func (p *Placer) Explain(_ *cluster.Cluster, _ *trace.Pod, _ cluster.Placement, placed bool, e *cluster.Explanation) {
	if p.last == nil || !placed {
		return
	}
	for _, x := range p.last.Explanations {
		if x.Chosen == nil {
			continue
		}
		e.Score = x.Chosen.Score
		for _, c := range x.Chosen.Components {
			e.Components = append(e.Components, cluster.ScoreComponent{Name: c.Name, Score: c.Score})
		}
	}
}
