package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/strata-dev/strata/api"
)

const mib = int64(1) << 20

// template is one kind of workload in the mix. Its weight is its share of
// the tasks; service templates run under spread when the policy is "mixed".
type template struct {
	name     string
	weight   int
	class    string
	priority int
	service  bool
	gang     int // members per gang; the workload's replicas split into gangs
	task     api.Task
	place    api.Placement
	// rel holds the template's relation rules (spread, anti-affinity,
	// peers), left out with relations off. near names a template whose
	// latest workload so far the group has soft zone affinity to; dataset
	// asks for soft data locality on one of the generated datasets.
	rel     api.Placement
	near    string
	dataset bool
	peers   bool // soft peers over the whole workload (every gang of a job)
}

func rule(key, op string, weight int, values ...string) api.LabelRule {
	return api.LabelRule{Key: key, Op: op, Values: values, Weight: weight}
}

func hardSpread(key string, maxSkew int) api.SpreadRule {
	return api.SpreadRule{Key: key, MaxSkew: maxSkew, Mode: api.ModeHard}
}

func softSpread(key string, maxSkew, weight int) api.SpreadRule {
	return api.SpreadRule{Key: key, MaxSkew: maxSkew, Mode: api.ModeSoft, Weight: weight}
}

// selfAnti keeps the group's own replicas apart, one per domain of key.
func selfAnti(key string) api.AffinityRule { return api.AffinityRule{Key: key, Mode: api.ModeHard} }

// templates is the workload mix: web and API services, caches, databases on
// pinned cores, CPU batch kept off GPU machines, GPU training (whole GPUs of
// given models), GPU inference on shares, log shippers with disk and
// bandwidth, ETL on pinned cores, queues; under require, prefer and avoid
// rules over zone, datacenter, rack, powerZone and machine labels.
//
// Relation rules follow what such services declare in practice, sized for
// 1,000 replicas a workload on cells of 10k nodes and more: stateless
// services spread hard over zones (maxSkew 1, Kubernetes' usual
// topologySpreadConstraints) and softly over racks; the queue spreads hard
// over racks (maxSkew 2); caches and databases never put two replicas on
// one node (hard self anti-affinity: a 1,000-replica workload needs 1,000
// nodes, which every cell the targets are set for has); inference spreads
// softly over racks (a hard rule would count zones without T4/A100 nodes);
// APIs want a cache in their zone (soft affinity); training workers want
// each other near (peers over the whole job) and nodes that hold shards of
// their dataset (soft data locality).
var templates = []template{
	{name: "web", weight: 20, class: api.PriorityProduction, priority: 1000, service: true,
		task:  api.Task{Resources: api.Resources{CPUMilli: 1000, MemoryBytes: 2 * gib, NetMbps: 50}},
		place: api.Placement{Prefer: []api.LabelRule{rule(api.LabelZone, api.OpEqual, 50, zoneName(0))}, Avoid: []api.LabelRule{rule("gpu", api.OpExists, 80)}},
		rel:   api.Placement{Spread: []api.SpreadRule{hardSpread(api.LabelZone, 1), softSpread(api.LabelRack, 1, 30)}}},
	{name: "api", weight: 15, class: api.PriorityProduction, priority: 1200, service: true,
		task:  api.Task{Resources: api.Resources{CPUMilli: 2000, MemoryBytes: 4 * gib, NetMbps: 100}},
		place: api.Placement{Require: []api.LabelRule{rule(api.LabelZone, api.OpIn, 0, zoneName(0), zoneName(1))}, Avoid: []api.LabelRule{rule("gpu", api.OpExists, 80)}},
		rel:   api.Placement{Spread: []api.SpreadRule{hardSpread(api.LabelZone, 1)}},
		near:  "cache"},
	{name: "cache", weight: 10, class: api.PriorityProduction, priority: 1100, service: true,
		task:  api.Task{Resources: api.Resources{CPUMilli: 500, MemoryBytes: 8 * gib}},
		place: api.Placement{Prefer: []api.LabelRule{rule("machine", api.OpEqual, 60, "cpu-large")}, Avoid: []api.LabelRule{rule(api.LabelPowerZone, api.OpIn, 30, "dc00-pz00", "dc00-pz01")}},
		rel:   api.Placement{AntiAffinity: []api.AffinityRule{selfAnti(api.LabelNode)}}},
	{name: "db", weight: 8, class: api.PriorityProduction, priority: 1500, service: true,
		task:  api.Task{Resources: api.Resources{CPUMilli: 4000, MemoryBytes: 16 * gib, DiskBytes: 200 * gib}, ExclusiveCores: true},
		place: api.Placement{Require: []api.LabelRule{rule(api.LabelDatacenter, api.OpNotIn, 0, "dc01"), rule("gpu", api.OpNotIn, 0, "A100", "H100")}},
		rel:   api.Placement{AntiAffinity: []api.AffinityRule{selfAnti(api.LabelNode)}, Spread: []api.SpreadRule{softSpread(api.LabelRack, 1, 50)}}},
	{name: "batch", weight: 15, class: api.PriorityBatch, priority: 500,
		task:  api.Task{Resources: api.Resources{CPUMilli: 4000, MemoryBytes: 8 * gib, DiskBytes: 20 * gib}},
		place: api.Placement{Avoid: []api.LabelRule{rule("gpu", api.OpExists, 90)}}},
	{name: "train", weight: 3, class: api.PriorityBatch, priority: 800, gang: 16,
		task:    api.Task{Resources: api.Resources{CPUMilli: 16000, MemoryBytes: 128 * gib, GPUs: 4, NetMbps: 10000}, GPUModels: []string{"A100", "H100"}},
		place:   api.Placement{Prefer: []api.LabelRule{rule("gpu", api.OpEqual, 40, "H100")}},
		dataset: true, peers: true},
	{name: "infer", weight: 5, class: api.PriorityProduction, priority: 1300, service: true,
		task:  api.Task{Resources: api.Resources{CPUMilli: 2000, MemoryBytes: 8 * gib, GPUMilli: 250}, GPUModels: []string{"T4", "A100"}},
		place: api.Placement{Prefer: []api.LabelRule{rule(api.LabelZone, api.OpIn, 30, zoneName(1), zoneName(2))}},
		rel:   api.Placement{Spread: []api.SpreadRule{softSpread(api.LabelRack, 1, 40)}}},
	{name: "log", weight: 13, class: api.PriorityBestEffort, priority: 100,
		task: api.Task{Resources: api.Resources{CPUMilli: 250, MemoryBytes: 512 * mib, DiskBytes: 10 * gib, NetMbps: 100}}},
	{name: "etl", weight: 5, class: api.PriorityBatch, priority: 600,
		task:  api.Task{Resources: api.Resources{CPUMilli: 8000, MemoryBytes: 32 * gib, DiskBytes: 100 * gib}, ExclusiveCores: true},
		place: api.Placement{Require: []api.LabelRule{rule(api.LabelZone, api.OpNotEqual, 0, zoneName(2))}, Avoid: []api.LabelRule{rule("gpu", api.OpExists, 90)}}},
	{name: "queue", weight: 6, class: api.PriorityProduction, priority: 1000, service: true,
		task:  api.Task{Resources: api.Resources{CPUMilli: 1500, MemoryBytes: 2 * gib}},
		place: api.Placement{Require: []api.LabelRule{rule(api.LabelRack, api.OpNotIn, 0, "dc00-r00-k00", "dc00-r00-k01", "dc00-r00-k02")}},
		rel:   api.Placement{Spread: []api.SpreadRule{hardSpread(api.LabelRack, 2)}}},
}

// Policies accepted by GenerateWorkloads.
const (
	PolicyBinpack = api.PolicyBinpack
	PolicySpread  = api.PolicySpread
	PolicyMixed   = "mixed" // services spread, the rest binpack
)

// GenerateWorkloads returns workloads totalling tasks replicas, at most
// perWorkload each, drawn from the mix with seed. Each workload is one task
// group; the last one takes the remainder.
//
// With gangs false, training jobs are plain groups instead of gangs (same
// resources), for comparing the cost of gang placement. With relations
// false the templates' relation rules (spread, affinity, anti-affinity,
// peers, data locality) are left out: the mix as it was before they were
// added, draw for draw.
func GenerateWorkloads(tasks, perWorkload int, policy string, gangs, relations bool, seed int64) []*api.Workload {
	if perWorkload <= 0 {
		perWorkload = 1000
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x3011))
	total := 0
	for _, t := range templates {
		total += t.weight
	}
	var out []*api.Workload
	latest := map[string]string{} // template → its latest workload so far
	for left, i := tasks, 0; left > 0; i++ {
		x := r.IntN(total)
		t := templates[0]
		for _, c := range templates {
			if x < c.weight {
				t = c
				break
			}
			x -= c.weight
		}
		n := min(perWorkload, left)
		left -= n
		if !gangs {
			t.gang = 0
		}
		name := fmt.Sprintf("%s-%05d", t.name, i)
		var rel *api.Placement
		if relations {
			rel = t.relations(name, latest[t.near], datasets[i%len(datasets)])
		}
		latest[t.name] = name
		out = append(out, t.workload(name, n, policy, rel))
	}
	return out
}

// relations returns the template's relation rules for workload name: near
// is the workload of t.near to be close to ("" when there is none yet),
// dataset the one to read from.
func (t template) relations(name, near, dataset string) *api.Placement {
	rel := api.Placement{
		Spread:       slices.Clone(t.rel.Spread),
		Affinity:     slices.Clone(t.rel.Affinity),
		AntiAffinity: slices.Clone(t.rel.AntiAffinity),
	}
	if near != "" {
		rel.Affinity = append(rel.Affinity, api.AffinityRule{Workload: near, Key: api.LabelZone, Mode: api.ModeSoft, Weight: 30})
	}
	if t.peers {
		rel.CommunicatesWith = append(rel.CommunicatesWith, api.PeerRule{Workload: name, Weight: 50})
	}
	if t.dataset {
		rel.DataLocality = append(rel.DataLocality, api.DataRule{Dataset: dataset, Mode: api.ModeSoft, Weight: 40})
	}
	return &rel
}

func (t template) workload(name string, replicas int, policy string, rel *api.Placement) *api.Workload {
	pol := policy
	if policy == PolicyMixed {
		pol = PolicyBinpack
		if t.service {
			pol = PolicySpread
		}
	}
	task := t.task
	task.Name, task.Driver, task.Command = "main", "mock", []string{t.name}
	w := &api.Workload{
		Name:             name,
		Labels:           map[string]string{"app": t.name},
		PriorityClass:    t.class,
		Priority:         t.priority,
		SchedulingPolicy: api.SchedulingPolicy{Type: pol},
		Version:          1,
	}
	place := t.place
	if rel != nil {
		place.Spread, place.Affinity, place.AntiAffinity = rel.Spread, rel.Affinity, rel.AntiAffinity
		place.CommunicatesWith, place.DataLocality = rel.CommunicatesWith, rel.DataLocality
	}
	group := func(gname string, n int) *api.TaskGroup {
		return &api.TaskGroup{
			Name:          gname,
			Replicas:      n,
			Tasks:         []*api.Task{&task},
			Placement:     place,
			RestartPolicy: api.RestartPolicy{Mode: api.RestartOnFailure, Attempts: 3},
		}
	}
	if t.gang <= 0 {
		w.Groups = []*api.TaskGroup{group(t.name, replicas)}
		return w
	}
	// A training job is many gangs of t.gang members, each all-or-nothing
	// and preferably inside one rack.
	for k := 0; replicas > 0; k++ {
		n := min(t.gang, replicas)
		replicas -= n
		g := group(fmt.Sprintf("%s-%03d", t.name, k), n)
		g.Gang = &api.GangPolicy{MinMember: n, Timeout: 10 * time.Minute, Topology: api.LabelRack}
		w.Groups = append(w.Groups, g)
	}
	return w
}
