package schedplacer

import (
	"fmt"
	"strconv"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/scheduler/fgd"
	"github.com/strata-dev/strata/internal/sim/cluster"
	simfrag "github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Placer places each pod by running scheduler.Schedule on a view of the
// cluster. It keeps a per-node cache keyed by NodeState.Version, so a node
// is translated again only after its free resources changed.
type Placer struct {
	policy string
	seed   int64
	sample int
	calls  int64

	nodes  []*api.Node
	allocs [][]*api.Allocation
	vers   []uint64
	ids    map[string]int
	wl     *api.Workload
	last   *api.Plan // of the latest Place, for Explain

	// target is the trace the fgd policy measures fragmentation against;
	// policies is built from it and the cluster on the first Place.
	target   []trace.Pod
	policies map[string]scheduler.Policy
}

var (
	_ cluster.Placer    = (*Placer)(nil)
	_ cluster.Explainer = (*Placer)(nil)
)

// New returns a placer that schedules with policy (a scheduler policy type:
// binpack or spread). sample is scheduler.Options.FeasibleSample (0: the
// server's default sampling; negative: score every feasible node).
func New(policy string, seed int64, sample int) *Placer {
	return &Placer{policy: policy, seed: seed, sample: sample}
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
	p.sync(c)
	if p.policies == nil {
		p.policies = map[string]scheduler.Policy{fgd.Name: fgd.New(fgdConfig(c, p.target))}
	}
	p.wl = workloadFor(pod, p.policy)
	p.calls++
	eval := &api.Evaluation{ID: "sim-" + strconv.FormatInt(p.calls, 10), Workload: p.wl.Name, Status: api.EvalPending}
	plan := scheduler.Schedule(p, eval, scheduler.Options{Seed: p.seed + p.calls, Now: time.Unix(0, 0), FeasibleSample: p.sample, Policies: p.policies})
	p.last = plan
	for nodeID, placed := range plan.Place {
		if len(placed) != 1 {
			continue
		}
		i := p.ids[nodeID]
		var gpus cluster.GPUSet
		for _, g := range placed[0].Assignment.GPUs {
			idx, err := strconv.Atoi(g)
			if err != nil {
				return cluster.Placement{}, false
			}
			gpus = gpus.With(idx)
		}
		return cluster.PlacementFor(i, pod, gpus), true
	}
	return cluster.Placement{}, false
}

// sync refreshes the translated nodes whose simulated state changed.
func (p *Placer) sync(c *cluster.Cluster) {
	if len(p.nodes) != c.NumNodes() {
		n := c.NumNodes()
		p.nodes, p.allocs, p.vers = make([]*api.Node, n), make([][]*api.Allocation, n), make([]uint64, n)
		p.ids = make(map[string]int, n)
		for i := range p.vers {
			p.vers[i] = ^uint64(0)
		}
	}
	for i := range p.nodes {
		ns := c.Node(i)
		if p.vers[i] == ns.Version && p.nodes[i] != nil {
			continue
		}
		p.nodes[i], p.allocs[i] = translate(i, ns)
		p.vers[i] = ns.Version
		p.ids[p.nodes[i].ID] = i
	}
}

// translate builds the api view of one simulated node: capacity, what is
// allocated, its GPUs, and one allocation per GPU in use so the scheduler
// knows each GPU's occupancy.
func translate(i int, ns *cluster.NodeState) (*api.Node, []*api.Allocation) {
	id := fmt.Sprintf("sim-%06d", i)
	status := api.NodeReady
	if !ns.Up {
		status = api.NodeDown
	}
	n := &api.Node{ID: id, Name: ns.Name, Status: status,
		Capacity:  api.Resources{CPUMilli: ns.CPUCap, MemoryBytes: ns.MemCap << 20, GPUs: int64(len(ns.GPUFree))},
		Allocated: api.Resources{CPUMilli: ns.CPUCap - ns.CPUFree, MemoryBytes: (ns.MemCap - ns.MemFree) << 20}}
	var allocs []*api.Allocation
	for g, free := range ns.GPUFree {
		n.GPUs = append(n.GPUs, api.GPU{ID: strconv.Itoa(g), Model: ns.Model, NUMA: -1})
		used := 1000 - free
		switch {
		case used <= 0:
			continue
		case free == 0:
			n.Allocated.GPUs++
			allocs = append(allocs, &api.Allocation{ID: fmt.Sprintf("%s-gpu%d", id, g), NodeID: id, DesiredStatus: api.DesiredRun,
				ClientStatus: api.AllocRunning, Resources: api.Resources{GPUs: 1}, Assignment: api.Assignment{NUMANode: -1, GPUs: []string{strconv.Itoa(g)}}})
		default:
			n.Allocated.GPUMilli += used
			allocs = append(allocs, &api.Allocation{ID: fmt.Sprintf("%s-gpu%d", id, g), NodeID: id, DesiredStatus: api.DesiredRun,
				ClientStatus: api.AllocRunning, Resources: api.Resources{GPUMilli: used},
				Assignment: api.Assignment{NUMANode: -1, GPUs: []string{strconv.Itoa(g)}, GPUMilli: used}})
		}
	}
	return n, allocs
}

// workloadFor is the one-replica workload a pod stands for.
func workloadFor(pod *trace.Pod, policy string) *api.Workload {
	t := &api.Task{Name: "pod", Driver: "mock", Command: []string{"sim"},
		Resources: api.Resources{CPUMilli: pod.CPUMilli, MemoryBytes: pod.MemoryMiB << 20}, GPUModels: pod.GPUSpec}
	if pod.IsShare() {
		t.Resources.GPUMilli = pod.PerGPUMilli()
	} else {
		t.Resources.GPUs = int64(pod.NumGPU)
	}
	return &api.Workload{Name: pod.Name, Version: 1, SchedulingPolicy: api.SchedulingPolicy{Type: policy},
		Groups: []*api.TaskGroup{{Name: "pod", Replicas: 1, Tasks: []*api.Task{t}}}}
}

// scheduler.State over the translated view.

func (p *Placer) Nodes() []*api.Node { return p.nodes }

func (p *Placer) Node(id string) *api.Node {
	if i, ok := p.ids[id]; ok {
		return p.nodes[i]
	}
	return nil
}

func (p *Placer) Workload(name string) *api.Workload {
	if p.wl != nil && p.wl.Name == name {
		return p.wl
	}
	return nil
}

func (p *Placer) AllocsByWorkload(string) []*api.Allocation { return nil }

func (p *Placer) AllocsByNode(id string) []*api.Allocation {
	if i, ok := p.ids[id]; ok {
		return p.allocs[i]
	}
	return nil
}

func (p *Placer) Index() uint64 { return uint64(p.calls) }

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
