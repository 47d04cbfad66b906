package cluster_test

import (
	"errors"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/trace"
)

func genNodes(t *rapid.T) []trace.Node {
	n := rapid.IntRange(1, 6).Draw(t, "nodes")
	nodes := make([]trace.Node, n)
	for i := range nodes {
		gpus := rapid.IntRange(0, 8).Draw(t, "gpus")
		nodes[i] = trace.Node{Name: "n", CPUMilli: rapid.Int64Range(0, 16000).Draw(t, "cpu"),
			MemoryMiB: rapid.Int64Range(0, 65536).Draw(t, "mem"), GPUs: gpus}
		if gpus > 0 {
			nodes[i].GPUModel = rapid.SampledFrom([]string{"T4", "V100"}).Draw(t, "model")
		}
	}
	return nodes
}

func genPod(t *rapid.T) *trace.Pod {
	p := &trace.Pod{Name: "p", CPUMilli: rapid.Int64Range(0, 8000).Draw(t, "pcpu"), MemoryMiB: rapid.Int64Range(0, 32768).Draw(t, "pmem")}
	switch rapid.IntRange(0, 2).Draw(t, "kind") {
	case 1:
		p.NumGPU, p.GPUMilli = 1, rapid.Int64Range(1, 999).Draw(t, "milli")
	case 2:
		p.NumGPU, p.GPUMilli = rapid.IntRange(1, 4).Draw(t, "num"), 1000
	}
	if rapid.Bool().Draw(t, "spec") {
		p.GPUSpec = []string{"T4"}
	}
	return p
}

// check verifies the accounting invariants against a recomputation.
func check(t *rapid.T, c *cluster.Cluster, nodes []trace.Node) {
	var used cluster.Resources
	for i := 0; i < c.NumNodes(); i++ {
		n := c.Node(i)
		if n.CPUFree < 0 || n.MemFree < 0 || n.CPUFree > n.CPUCap || n.MemFree > n.MemCap {
			t.Fatalf("node %d overcommitted: %+v", i, n)
		}
		var free int64
		for g, f := range n.GPUFree {
			if f < 0 || f > 1000 {
				t.Fatalf("node %d GPU %d has %d milli free", i, g, f)
			}
			free += f
		}
		if free != n.GPUFreeTotal() {
			t.Fatalf("node %d GPU total %d, recomputed %d", i, n.GPUFreeTotal(), free)
		}
		var cpu, mem int64
		gpuUsed := make([]int64, len(n.GPUFree))
		for _, id := range n.Allocs {
			a := c.Alloc(id)
			cpu += a.Pod.CPUMilli
			mem += a.Pod.MemoryMiB
			for g := range gpuUsed {
				if a.GPUs.Has(g) {
					gpuUsed[g] += a.Milli
				}
			}
		}
		if cpu != n.CPUCap-n.CPUFree || mem != n.MemCap-n.MemFree {
			t.Fatalf("node %d accounting drift", i)
		}
		for g := range gpuUsed {
			if gpuUsed[g]+n.GPUFree[g] != 1000 {
				t.Fatalf("node %d GPU %d: used %d + free %d != 1000", i, g, gpuUsed[g], n.GPUFree[g])
			}
		}
		used.CPUMilli += cpu
		used.MemoryMiB += mem
		used.GPUMilli += int64(len(n.GPUFree))*1000 - free
	}
	if used != c.Used() {
		t.Fatalf("cluster used %+v, recomputed %+v", c.Used(), used)
	}
}

// TestNeverOvercommit throws arbitrary (often invalid) placements and
// releases at the cluster: Assign must reject every one that would
// overcommit, and accept exactly those Fits allows on the chosen GPUs.
func TestNeverOvercommit(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := genNodes(t)
		c, err := cluster.New(nodes)
		if err != nil {
			t.Fatal(err)
		}
		var live []cluster.AllocID
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for s := 0; s < steps; s++ {
			if len(live) > 0 && rapid.IntRange(0, 3).Draw(t, "op") == 0 {
				k := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
				if err := c.Release(live[k]); err != nil {
					t.Fatal(err)
				}
				if err := c.Release(live[k]); !errors.Is(err, cluster.ErrUnknownAlloc) {
					t.Fatalf("double release: %v", err)
				}
				live = append(live[:k], live[k+1:]...)
			} else {
				p := genPod(t)
				pl := cluster.Placement{Node: rapid.IntRange(0, len(nodes)-1).Draw(t, "node"),
					GPUs: cluster.GPUSet(rapid.Uint64Range(0, 255).Draw(t, "gpuset")), Milli: p.PerGPUMilli()}
				if rapid.Bool().Draw(t, "default") {
					pl.GPUs = c.Node(pl.Node).DefaultGPUs(p)
				}
				fits := c.Fits(pl.Node, p)
				id, err := c.Assign(p, pl)
				if err == nil {
					if !fits {
						t.Fatalf("Assign accepted a pod Fits rejects")
					}
					live = append(live, id)
				} else if !errors.Is(err, cluster.ErrOvercommit) && !errors.Is(err, cluster.ErrBadPlacement) {
					t.Fatalf("unexpected error %v", err)
				}
			}
			if rapid.IntRange(0, 9).Draw(t, "down") == 0 {
				i := rapid.IntRange(0, len(nodes)-1).Draw(t, "which")
				evicted, err := c.SetDown(i)
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range evicted {
					for k := range live {
						if live[k] == id {
							live = append(live[:k], live[k+1:]...)
							break
						}
					}
				}
				if err := c.SetUp(i, nodes[i].CPUMilli, nodes[i].MemoryMiB); err != nil {
					t.Fatal(err)
				}
			}
			check(t, c, nodes)
		}
	})
}

func TestDefaultGPUsFitWheneverFits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := genNodes(t)
		c, _ := cluster.New(nodes)
		for s := 0; s < 30; s++ {
			p := genPod(t)
			i := rapid.IntRange(0, len(nodes)-1).Draw(t, "node")
			if !c.Fits(i, p) {
				continue
			}
			if _, err := c.Assign(p, cluster.PlacementFor(i, p, c.Node(i).DefaultGPUs(p))); err != nil {
				t.Fatalf("Fits said yes, default GPUs rejected: %v", err)
			}
		}
	})
}

func TestResizeRefusesToOvercommit(t *testing.T) {
	c, _ := cluster.New([]trace.Node{{Name: "a", CPUMilli: 4000, MemoryMiB: 4096, GPUs: 1, GPUModel: "T4"}})
	p := &trace.Pod{Name: "p", CPUMilli: 3000, MemoryMiB: 1024}
	if _, err := c.Assign(p, cluster.PlacementFor(0, p, 0)); err != nil {
		t.Fatal(err)
	}
	if err := c.Resize(0, 2000, 4096); !errors.Is(err, cluster.ErrOvercommit) {
		t.Fatalf("shrink below allocation: %v", err)
	}
	if err := c.Resize(0, 8000, 4096); err != nil || c.Node(0).CPUFree != 5000 || c.Capacity().CPUMilli != 8000 {
		t.Fatalf("grow: %v, %+v", err, c.Node(0))
	}
}

func TestChangesLogsEveryNodeChange(t *testing.T) {
	c, err := cluster.New([]trace.Node{{Name: "a", CPUMilli: 8000, MemoryMiB: 8192}, {Name: "b", CPUMilli: 8000, MemoryMiB: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	if got, next, ok := c.Changes(0); len(got) != 0 || next != 0 || !ok {
		t.Fatalf("new cluster: %v %d %v", got, next, ok)
	}
	p := &trace.Pod{Name: "p", CPUMilli: 1000, MemoryMiB: 1024}
	id, err := c.Assign(p, cluster.PlacementFor(1, p, 0))
	if err != nil {
		t.Fatal(err)
	}
	cur := c.ChangeCursor()
	if err := c.Release(id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetDown(0); err != nil {
		t.Fatal(err)
	}
	if err := c.SetUp(0, 4000, 4096); err != nil {
		t.Fatal(err)
	}
	if err := c.Resize(1, 6000, 8192); err != nil {
		t.Fatal(err)
	}
	got, next, ok := c.Changes(cur)
	if !ok || !slices.Equal(got, []int32{1, 0, 0, 1}) || next != cur+4 {
		t.Fatalf("changes since %d = %v (next %d, complete %v)", cur, got, next, ok)
	}
	if got, _, _ := c.Changes(next); len(got) != 0 {
		t.Fatalf("changes at the latest cursor = %v", got)
	}
	// The log keeps at least 4 × nodes (1024 here) changes; a reader that
	// falls further behind is told to look at every node.
	for k := 0; k < 3000; k++ {
		if err := c.Resize(1, 6000+int64(k%2), 8192); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, ok := c.Changes(next); ok {
		t.Fatal("a cursor 3,000 changes old is still complete")
	}
	if got, _, ok := c.Changes(c.ChangeCursor() - 1000); !ok || len(got) != 1000 {
		t.Fatalf("last 1,000 changes: %d, complete %v", len(got), ok)
	}
}

// TestDifferentMachine holds the different-machine constraint through
// random placements, releases and failures: a DistinctNode pod never shares
// a node with another pod of its job, Fits says exactly that (against a
// count of the live allocations) and Assign refuses what Fits refuses.
func TestDifferentMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := make([]trace.Node, rapid.IntRange(1, 6).Draw(t, "nodes"))
		for i := range nodes {
			nodes[i] = trace.Node{Name: "n", CPUMilli: 64000, MemoryMiB: 65536}
		}
		c, err := cluster.New(nodes)
		if err != nil {
			t.Fatal(err)
		}
		var live []cluster.AllocID
		for step := 0; step < 80; step++ {
			switch op := rapid.IntRange(0, 5).Draw(t, "op"); {
			case op <= 3:
				p := &trace.Pod{Name: "p", CPUMilli: 1000, MemoryMiB: 1, Job: rapid.Int64Range(0, 2).Draw(t, "job"), DistinctNode: rapid.Bool().Draw(t, "distinct")}
				i := rapid.IntRange(0, len(nodes)-1).Draw(t, "node")
				conflict := false
				for _, id := range c.Node(i).Allocs {
					if q := c.Alloc(id).Pod; p.Job != 0 && q.Job == p.Job && (p.DistinctNode || q.DistinctNode) {
						conflict = true
					}
				}
				if c.Fits(i, p) == conflict || c.Conflicts(i, p) != conflict {
					t.Fatalf("node %d, pod %+v: Fits %v, Conflicts %v, a count says conflict=%v", i, p, c.Fits(i, p), c.Conflicts(i, p), conflict)
				}
				id, err := c.Assign(p, cluster.PlacementFor(i, p, 0))
				if conflict != (err != nil) {
					t.Fatalf("Assign with conflict=%v: %v", conflict, err)
				}
				if err == nil {
					live = append(live, id)
				} else if !errors.Is(err, cluster.ErrBadPlacement) {
					t.Fatal(err)
				}
			case op == 4 && len(live) > 0:
				k := rapid.IntRange(0, len(live)-1).Draw(t, "release")
				if c.Alloc(live[k]).Live {
					if err := c.Release(live[k]); err != nil {
						t.Fatal(err)
					}
				}
				live = append(live[:k], live[k+1:]...)
			default:
				i := rapid.IntRange(0, len(nodes)-1).Draw(t, "down")
				if _, err := c.SetDown(i); err != nil {
					t.Fatal(err)
				}
				if err := c.SetUp(i, 64000, 65536); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func TestResizeAlloc(t *testing.T) {
	c, err := cluster.New([]trace.Node{{Name: "a", CPUMilli: 8000, MemoryMiB: 8192}})
	if err != nil {
		t.Fatal(err)
	}
	p := &trace.Pod{Name: "p", CPUMilli: 2000, MemoryMiB: 2048}
	id, err := c.Assign(p, cluster.PlacementFor(0, p, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ResizeAlloc(id, 8001, 2048); !errors.Is(err, cluster.ErrOvercommit) {
		t.Fatalf("growing past the node: %v", err)
	}
	if err := c.ResizeAlloc(id, 8000, 1024); err != nil {
		t.Fatal(err)
	}
	if n := c.Node(0); n.CPUFree != 0 || n.MemFree != 7168 || c.Used().CPUMilli != 8000 {
		t.Fatalf("after resize: free %d/%d, used %+v", n.CPUFree, n.MemFree, c.Used())
	}
	if err := c.Release(id); err != nil {
		t.Fatal(err)
	}
	if n := c.Node(0); n.CPUFree != 8000 || n.MemFree != 8192 || c.Used() != (cluster.Resources{}) {
		t.Fatalf("release returned what the pod asked for, not what it held: free %d/%d", n.CPUFree, n.MemFree)
	}
	if err := c.ResizeAlloc(id, 1, 1); !errors.Is(err, cluster.ErrUnknownAlloc) {
		t.Fatalf("resize of a released allocation: %v", err)
	}
}
