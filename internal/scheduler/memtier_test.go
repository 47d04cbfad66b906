package scheduler

import (
	"testing"

	"github.com/strata-dev/strata/api"
)

func (b *groupBuilder) tiers(t ...string) *groupBuilder { b.task().MemoryTiers = t; return b }

func (b *groupBuilder) hugePages(p2Mi, p1Gi int64) *groupBuilder {
	b.task().Resources.HugePages2Mi, b.task().Resources.HugePages1Gi = p2Mi, p1Gi
	return b
}

func (b *nodeBuilder) hugePages(p2Mi, p1Gi int64) *nodeBuilder {
	b.n.Capacity.HugePages2Mi, b.n.Capacity.HugePages1Gi = p2Mi, p1Gi
	return b
}

// slowMemory adds a CPU-less NUMA node of the slow tier.
func (b *nodeBuilder) slowMemory(id int, mem string) *nodeBuilder {
	b.n.NUMA = append(b.n.NUMA, api.NUMANode{ID: id, MemoryBytes: bytesOf(mem), Tier: api.MemoryTierSlow})
	return b
}

func TestMemoryTierFilter(t *testing.T) {
	dram := func() *nodeBuilder { return node("n1").cpu(4000).mem("8Gi").numa(0, "8Gi", 0, 1, 2, 3) }
	tests := []struct {
		name  string
		group *groupBuilder
		node  *nodeBuilder
		want  string
	}{
		{"slow only, node without slow memory", taskGroup("g").mem("1Gi").tiers("slow"), dram(), "no memory tier slow"},
		{"slow only, node without NUMA detail", taskGroup("g").mem("1Gi").tiers("slow"), node("n1").cpu(4000).mem("8Gi"), "no memory tier slow"},
		{"slow only, node with slow memory", taskGroup("g").mem("1Gi").tiers("slow"), dram().slowMemory(1, "64Gi"), ""},
		{"slow only, too little of it", taskGroup("g").mem("1Gi").tiers("slow"), dram().slowMemory(1, "512Mi"), "too little memory in tier slow"},
		{"accepts both, node without slow memory", taskGroup("g").mem("1Gi").tiers("standard", "slow"), dram(), ""},
		{"standard named, node without slow memory", taskGroup("g").mem("1Gi").tiers("standard"), dram(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustEqual(t, "reason", checkOne(memTierFilter{}, tt.group, tt.node), tt.want)
		})
	}
	mustEqual(t, "ordinary group has no tier stage", len(compiled(nil, taskGroup("g").tiers("standard")).tiers), 0)
}

// TestSlowTierTasksPlaceOnlyWhereSlowMemoryIs: a task asking for the slow
// tier goes to the one node that has it; without one the failure says why,
// and CheckNode refuses a placement on a node without it.
func TestSlowTierTasksPlaceOnlyWhereSlowMemoryIs(t *testing.T) {
	cache := func() *api.Workload {
		return workload("cache", taskGroup("cache").cpu(500).mem("2Gi").replicas(2).tiers("slow"))
	}
	f := newFake(
		node("dram1").cpu(8000).mem("16Gi").numa(0, "16Gi", 0, 1, 2, 3),
		node("cxl").cpu(8000).mem("80Gi").numa(0, "16Gi", 0, 1, 2, 3).slowMemory(1, "64Gi"),
	)
	f.putWorkload(cache())
	plan := schedule(f, "cache", 1)
	mustEqual(t, "failures", len(plan.Failures), 0)
	mustEqual(t, "placed on cxl", len(plan.Place["cxl"]), 2)

	f = newFake(node("dram1").cpu(8000).mem("16Gi"), node("dram2").cpu(8000).mem("16Gi"))
	f.putWorkload(cache())
	plan = schedule(f, "cache", 1)
	mustEqual(t, "failures", len(plan.Failures), 1)
	mustEqual(t, "summary", plan.Failures[0].Summary, "2 nodes: no memory tier slow")

	alloc := &api.Allocation{ID: "a1", TaskGroup: cache().Groups[0], Resources: api.Resources{CPUMilli: 500}}
	ok, reason := CheckNode(node("dram1").cpu(8000).mem("16Gi").n, nil, nil, []*api.Allocation{alloc})
	mustEqual(t, "CheckNode ok", ok, false)
	mustEqual(t, "CheckNode reason", reason, "alloc a1: no memory tier slow")
}

// TestHugePagesPlaceOnlyWhereThePoolHasRoom: huge pages are a node
// dimension like memory: a node without a pool (or with too little left)
// is refused with the page size in the reason.
func TestHugePagesPlaceOnlyWhereThePoolHasRoom(t *testing.T) {
	f := newFake(
		node("plain").cpu(8000).mem("16Gi"),
		node("pool").cpu(8000).mem("16Gi").hugePages(256<<20, 0),
	)
	f.putWorkload(workload("dpdk", taskGroup("dpdk").cpu(500).mem("256Mi").replicas(3).hugePages(128<<20, 0)))
	plan := schedule(f, "dpdk", 1)
	mustEqual(t, "placed on the pool", len(plan.Place["pool"]), 2)
	mustEqual(t, "placed elsewhere", len(plan.Place["plain"]), 0)
	mustEqual(t, "failures", len(plan.Failures), 1)
	mustEqual(t, "summary", plan.Failures[0].Summary, "2 nodes: insufficient 2Mi huge pages")

	f = newFake(node("pool").cpu(8000).mem("16Gi").hugePages(256<<20, 1<<30))
	f.putWorkload(workload("db", taskGroup("db").cpu(500).mem("256Mi").replicas(2).hugePages(0, 1<<30)))
	plan = schedule(f, "db", 1)
	mustEqual(t, "1Gi placed", len(plan.Place["pool"]), 1)
	mustEqual(t, "1Gi summary", plan.Failures[0].Summary, "1 node: insufficient 1Gi huge pages")
}
