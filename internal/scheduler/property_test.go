package scheduler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

func genNode(t *rapid.T, i int) *nodeBuilder {
	b := node(fmt.Sprintf("n%02d", i)).
		cpu(int64(rapid.IntRange(2, 16).Draw(t, "cores"))*1000).
		mem(fmt.Sprintf("%dGi", rapid.IntRange(1, 32).Draw(t, "memGi"))).
		label("rack", fmt.Sprintf("r%d", rapid.IntRange(0, 2).Draw(t, "rack")))
	if rapid.Bool().Draw(t, "numa") {
		cores := int(b.n.Capacity.CPUMilli / 1000)
		half := cores / 2
		numaMem := ""
		if rapid.Bool().Draw(t, "numaMemKnown") {
			numaMem = fmt.Sprintf("%dMi", b.n.Capacity.MemoryBytes>>21)
		}
		b.numa(0, numaMem, cpus(0, half)...).numa(1, numaMem, cpus(half, cores)...)
	}
	for g := range rapid.IntRange(0, 4).Draw(t, "gpus") {
		b.gpu(fmt.Sprint(g), rapid.SampledFrom([]string{"A100", "V100"}).Draw(t, "model"), g%2)
	}
	if rapid.IntRange(0, 9).Draw(t, "statusRoll") == 0 {
		b.status(rapid.SampledFrom([]string{api.NodeDown, api.NodeDraining}).Draw(t, "status"))
	}
	return b
}

func genGroup(t *rapid.T, name string) *groupBuilder {
	g := taskGroup(name).replicas(rapid.IntRange(0, 8).Draw(t, "replicas")).
		cpu(int64(rapid.IntRange(1, 40).Draw(t, "cpu")) * 100).
		mem(fmt.Sprintf("%dMi", rapid.IntRange(64, 8192).Draw(t, "memMi")))
	switch rapid.IntRange(0, 5).Draw(t, "shape") {
	case 1:
		g.exclusive()
	case 2:
		g.gpus(int64(rapid.IntRange(1, 2).Draw(t, "wantGPUs")))
	case 3:
		g.gpuMilli(int64(rapid.IntRange(1, 9).Draw(t, "share")) * 100)
	case 4:
		g.exclusive().gpus(1).models(rapid.SampledFrom([]string{"A100", "V100"}).Draw(t, "wantModel"))
	}
	if rapid.Bool().Draw(t, "constrained") {
		g.require("rack", "!=", fmt.Sprintf("r%d", rapid.IntRange(0, 2).Draw(t, "notRack")))
	}
	return g
}

// genPorts adds ports to a generated group: a few static ones shared
// across workloads (so they collide and preempt), one of them inside the
// dynamic range, and dynamic ones. It is kept out of genGroup so that the
// plan digest's scenarios (which draw from genGroup) stay as they were.
func genPorts(t *rapid.T, g *groupBuilder) *groupBuilder {
	for k := range rapid.IntRange(0, 2).Draw(t, "ports") {
		static := rapid.SampledFrom([]int{0, 0, 8080, 8081, api.DynamicPortMin + 1}).Draw(t, "static")
		if slices.ContainsFunc(g.g.Ports, func(p api.PortRequest) bool { return static != 0 && p.Static == static }) {
			static = 0
		}
		g.port(fmt.Sprint("p", k), static)
	}
	return g
}

// genNodeHardware gives a generated node a huge page pool of each size
// and a slow memory tier, each sometimes; like genPorts it is kept out of
// genNode so that the plan digest's scenarios stay as they were.
func genNodeHardware(t *rapid.T, b *nodeBuilder) *nodeBuilder {
	if rapid.Bool().Draw(t, "hugePool") {
		b.hugePages(int64(rapid.IntRange(0, 8).Draw(t, "pages2Mi"))*64<<20, int64(rapid.IntRange(0, 3).Draw(t, "pages1Gi"))<<30)
	}
	if rapid.IntRange(0, 2).Draw(t, "slowRoll") == 0 {
		b.slowMemory(7, fmt.Sprintf("%dGi", rapid.IntRange(1, 16).Draw(t, "slowGi")))
	}
	return b
}

// genHardware makes a generated group ask, sometimes, for huge pages and
// for the slow memory tier.
func genHardware(t *rapid.T, g *groupBuilder) *groupBuilder {
	if rapid.IntRange(0, 2).Draw(t, "hugeRoll") == 0 {
		g.hugePages(int64(rapid.IntRange(0, 4).Draw(t, "want2Mi"))*64<<20, int64(rapid.IntRange(0, 1).Draw(t, "want1Gi"))<<30)
	}
	if rapid.IntRange(0, 3).Draw(t, "tierRoll") == 0 {
		g.tiers(rapid.SampledFrom([][]string{{"slow"}, {"standard", "slow"}}).Draw(t, "tiers")...)
	}
	return g
}

// TestPropertyNeverOvercommits drives random cells through random sequences
// of submissions, scalings, updates, node failures and task failures, with
// random priorities so that workloads preempt each other. Every
// plan must pass CheckNode against the state it was computed on, and after
// it is applied no node may be overcommitted or hand out a core, a GPU or
// a port twice.
func TestPropertyNeverOvercommits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 10).Draw(t, "nodes") {
			nodes = append(nodes, genNodeHardware(t, genNode(t, i)))
		}
		f := newFake(nodes...)
		names := []string{"a", "b", "c"}
		for step := range rapid.IntRange(1, 12).Draw(t, "steps") {
			name := rapid.SampledFrom(names).Draw(t, "workload")
			switch rapid.IntRange(0, 4).Draw(t, "action") {
			case 0, 1: // submit or update
				w := workload(name)
				for gi := range rapid.IntRange(1, 3).Draw(t, "groups") {
					g := genHardware(t, genPorts(t, genGroup(t, fmt.Sprintf("g%d", gi))))
					if rapid.IntRange(0, 3).Draw(t, "gangRoll") == 0 {
						g.gang(0, "rack")
					}
					w.Groups = append(w.Groups, g.g)
				}
				if old := f.Workload("", name); old != nil {
					w.Version = old.Version + 1
				}
				// Random priorities make workloads preempt each other.
				w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
				if rapid.Bool().Draw(t, "spread") {
					w.SchedulingPolicy.Type = api.PolicySpread
				}
				f.putWorkload(w)
			case 2: // a node goes down or comes back
				n := f.nodes[rapid.IntRange(0, len(f.nodes)-1).Draw(t, "node")]
				n.Status = map[bool]string{true: api.NodeReady, false: api.NodeDown}[n.Status != api.NodeReady]
			case 3: // an allocation fails
				if len(f.allocs) > 0 {
					a := f.allocs[rapid.IntRange(0, len(f.allocs)-1).Draw(t, "alloc")]
					if !a.Terminal() {
						f.setClient(a.ID, api.AllocFailed)
					}
				}
			case 4: // stop
				if w := f.Workload("", name); w != nil {
					cp := *w
					cp.Stopped = true
					f.putWorkload(&cp)
				}
			}
			plan := Schedule(f, &api.Evaluation{ID: fmt.Sprint("e", step), Workload: name}, Options{Seed: int64(step)})
			checkPlan(t, f, plan)
			f.apply(plan, rapid.Bool().Draw(t, "finishStops"))
			checkState(t, f)
		}
	})
}

// checkPlan asserts what the plan applier would: CheckNode accepts every
// node's part, placements go to ready nodes only and stops name live
// allocations.
func checkPlan(t fataler, f *fakeState, plan *api.Plan) {
	for nodeID, place := range plan.Place {
		stopping := map[string]bool{}
		for _, s := range plan.Stop[nodeID] {
			stopping[s.AllocID] = true
		}
		if ok, reason := CheckNode(f.Node(nodeID), f.AllocsByNode(nodeID), stopping, place); !ok {
			t.Fatalf("CheckNode rejected the plan's part for %s: %s", nodeID, reason)
		}
	}
	stopped := map[string]bool{}
	for _, stops := range plan.Stop {
		for _, s := range stops {
			stopped[s.AllocID] = true
		}
	}
	for nodeID, stops := range plan.Stop {
		for _, s := range stops {
			a := f.alloc(s.AllocID)
			if a == nil || !live(a) {
				t.Fatalf("plan stops %s, which is not live", s.AllocID)
			}
			if s.PreemptedBy == "" {
				continue
			}
			if a.Workload == plan.Workload || a.Priority >= plan.Priority {
				t.Fatalf("%s/%s (priority %d) preempted %s of %s (priority %d)", plan.Workload, s.PreemptedBy, plan.Priority, a.ID, a.Workload, a.Priority)
			}
			if !slices.ContainsFunc(planAllocs(plan), func(p *api.Allocation) bool { return p.ID == s.PreemptedBy }) {
				t.Fatalf("victim %s on %s names preemptor %s, not placed by the plan", a.ID, nodeID, s.PreemptedBy)
			}
			if a.TaskGroup != nil && a.TaskGroup.Gang != nil {
				for _, m := range f.AllocsByWorkload("", a.Workload) {
					if m.Group == a.Group && live(m) && !stopped[m.ID] {
						t.Fatalf("gang member %s preempted but %s of its gang keeps running", a.ID, m.ID)
					}
				}
			}
		}
	}
}

// checkState recomputes every node's usage from its allocations, with an
// accounting independent of the scheduler's.
func checkState(t fataler, f *fakeState) {
	for _, n := range f.nodes {
		var used api.Resources
		cores := map[int]string{}
		whole := map[string]string{}
		milli := map[string]int64{}
		ports := map[int]string{}
		devices := map[string]string{}
		for _, a := range f.AllocsByNode(n.ID) {
			if a.Terminal() {
				continue
			}
			used = used.Add(a.Resources)
			for _, id := range a.Assignment.Devices {
				if other, taken := devices[id]; taken {
					t.Fatalf("node %s: device %s held by %s and %s", n.ID, id, other, a.ID)
				}
				if !slices.ContainsFunc(n.Devices, func(d api.Device) bool { return d.ID == id }) {
					t.Fatalf("node %s: alloc %s holds device %s, which the node does not have", n.ID, a.ID, id)
				}
				devices[id] = a.ID
			}
			for _, p := range a.Assignment.Ports {
				if other, taken := ports[p.Port]; taken {
					t.Fatalf("node %s: port %d held by %s and %s", n.ID, p.Port, other, a.ID)
				}
				ports[p.Port] = a.ID
			}
			for _, c := range a.Assignment.CPUs {
				if other, taken := cores[c]; taken {
					t.Fatalf("node %s: cpu %d held by %s and %s", n.ID, c, other, a.ID)
				}
				cores[c] = a.ID
			}
			if a.Assignment.GPUMilli > 0 {
				milli[a.Assignment.GPUs[0]] += a.Assignment.GPUMilli
				continue
			}
			for _, g := range a.Assignment.GPUs {
				if other, taken := whole[g]; taken {
					t.Fatalf("node %s: gpu %s held by %s and %s", n.ID, g, other, a.ID)
				}
				whole[g] = a.ID
			}
		}
		if dim := used.Exceeds(n.Capacity); dim != "" {
			t.Fatalf("node %s overcommitted in %s: used %+v of %+v", n.ID, dim, used, n.Capacity)
		}
		// Huge pages, summed apart from Resources' own arithmetic.
		var pages2Mi, pages1Gi int64
		for _, a := range f.AllocsByNode(n.ID) {
			if !a.Terminal() {
				pages2Mi += a.Resources.HugePages2Mi
				pages1Gi += a.Resources.HugePages1Gi
				if a.TaskGroup != nil && len(memoryTierNeeds(a.TaskGroup)) > 0 && !hasSlowTier(n) &&
					!api.AcceptsTier(a.TaskGroup.Tasks[0].MemoryTiers, api.MemoryTierStandard) {
					t.Fatalf("node %s without a slow tier holds %s, which wants one", n.ID, a.ID)
				}
			}
		}
		if pages2Mi > n.Capacity.HugePages2Mi || pages1Gi > n.Capacity.HugePages1Gi {
			t.Fatalf("node %s huge pages overcommitted: 2Mi %d of %d, 1Gi %d of %d", n.ID,
				pages2Mi, n.Capacity.HugePages2Mi, pages1Gi, n.Capacity.HugePages1Gi)
		}
		for g, m := range milli {
			if _, isWhole := whole[g]; isWhole || m > 1000 {
				t.Fatalf("node %s: gpu %s shared %d milli (held whole: %v)", n.ID, g, m, isWhole)
			}
		}
	}
}

// fataler is what the plan and state checks need of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func hasSlowTier(n *api.Node) bool {
	for _, nu := range n.NUMA {
		if nu.NUMATier() == api.MemoryTierSlow {
			return true
		}
	}
	return false
}
