package freeindex

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// brute answers the index's queries by looking at every node.
type brute struct {
	c    *cluster.Cluster
	rank []int32
}

func (b brute) ok(i int, cpu, mem int64, skip Skip) bool {
	n := b.c.Node(i)
	return n.Up && n.CPUFree >= cpu && n.MemFree >= mem && (skip == nil || !skip(i))
}

func (b brute) minCPU(cpu, mem int64, skip Skip) (int64, bool) {
	best, found := int64(math.MaxInt64), false
	for i := 0; i < b.c.NumNodes(); i++ {
		if b.ok(i, cpu, mem, skip) {
			best, found = min(best, b.c.Node(i).CPUFree), true
		}
	}
	return best, found
}

func (b brute) firstByRank(lo, hi, mem int64, skip Skip) (int, bool) {
	best := -1
	for i := 0; i < b.c.NumNodes(); i++ {
		if b.ok(i, lo, mem, skip) && b.c.Node(i).CPUFree <= hi && (best < 0 || b.rank[i] < b.rank[best]) {
			best = i
		}
	}
	return best, best >= 0
}

func (b brute) upNodes() []int {
	var up []int
	for i := 0; i < b.c.NumNodes(); i++ {
		if b.c.Node(i).Up {
			up = append(up, i)
		}
	}
	return up
}

// TestIndexAnswersLikeAScan drives a cluster through random placements,
// releases, node failures, returns and resizes, with an index synced after
// each step (or after several, so the change log is read in batches, or
// wraps and forces a rebuild), and compares every query with a scan of
// every node. Tiny blocks exercise splits and merges.
func TestIndexAnswersLikeAScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 60).Draw(t, "nodes")
		nodes := make([]trace.Node, n)
		for i := range nodes {
			nodes[i] = trace.Node{Name: "n", CPUMilli: rapid.SampledFrom([]int64{16000, 32000, 64000}).Draw(t, "cpu"),
				MemoryMiB: rapid.SampledFrom([]int64{8192, 65536, 131072}).Draw(t, "mem")}
		}
		c, err := cluster.New(nodes)
		if err != nil {
			t.Fatal(err)
		}
		rank := make([]int32, n)
		for i, r := range rand.New(rand.NewPCG(uint64(n), 1)).Perm(n) {
			rank[i] = int32(r)
		}
		ix := New(rank)
		ix.widthOverride = rapid.IntRange(1, 8).Draw(t, "width")
		ref := brute{c, rank}
		var live []cluster.AllocID
		pods := make([]trace.Pod, 0, 200)
		for step := 0; step < 120; step++ {
			switch op := rapid.IntRange(0, 9).Draw(t, "op"); {
			case op <= 4: // place on a random node that fits
				pods = append(pods, trace.Pod{Name: "p", CPUMilli: rapid.Int64Range(0, 20000).Draw(t, "pcpu"), MemoryMiB: rapid.Int64Range(0, 40000).Draw(t, "pmem")})
				p := &pods[len(pods)-1]
				i := rapid.IntRange(0, n-1).Draw(t, "on")
				if c.Fits(i, p) {
					id, err := c.Assign(p, cluster.PlacementFor(i, p, 0))
					if err != nil {
						t.Fatal(err)
					}
					live = append(live, id)
				}
			case op <= 6 && len(live) > 0:
				k := rapid.IntRange(0, len(live)-1).Draw(t, "release")
				if c.Alloc(live[k]).Live {
					if err := c.Release(live[k]); err != nil {
						t.Fatal(err)
					}
				}
				live = slices.Delete(live, k, k+1)
			case op == 7:
				if _, err := c.SetDown(rapid.IntRange(0, n-1).Draw(t, "down")); err != nil {
					t.Fatal(err)
				}
			case op == 8:
				i := rapid.IntRange(0, n-1).Draw(t, "up")
				if err := c.SetUp(i, c.Node(i).CPUCap, c.Node(i).MemCap); err != nil {
					t.Fatal(err)
				}
			default:
				i := rapid.IntRange(0, n-1).Draw(t, "resize")
				c.Resize(i, c.Node(i).CPUCap+rapid.Int64Range(-4000, 4000).Draw(t, "dcpu"), c.Node(i).MemCap) // may refuse: fine
			}
			if rapid.IntRange(0, 3).Draw(t, "sync") > 0 {
				continue
			}
			ix.Sync(c)
			var skip Skip
			if rapid.Bool().Draw(t, "skip") {
				odd := rapid.IntRange(2, 4).Draw(t, "mod")
				skip = func(i int) bool { return i%odd == 0 }
			}
			// Queries at a node's exact free amounts test the bounds.
			cpu, mem := rapid.Int64Range(0, 70000).Draw(t, "qcpu"), rapid.Int64Range(0, 140000).Draw(t, "qmem")
			if rapid.Bool().Draw(t, "exact") {
				at := c.Node(rapid.IntRange(0, n-1).Draw(t, "at"))
				cpu, mem = at.CPUFree, at.MemFree
			}
			if got, gok := ix.MinCPU(cpu, mem, skip); true {
				want, wok := ref.minCPU(cpu, mem, skip)
				if gok != wok || (gok && got != want) {
					t.Fatalf("MinCPU(%d, %d) = %d,%v want %d,%v", cpu, mem, got, gok, want, wok)
				}
			}
			hi := cpu + rapid.SampledFrom([]int64{0, 1, 5000, 70000}).Draw(t, "span")
			if got, gok := ix.FirstByRank(cpu, hi, mem, skip); true {
				want, wok := ref.firstByRank(cpu, hi, mem, skip)
				if gok != wok || got != want {
					t.Fatalf("FirstByRank(%d..%d, %d) = %d,%v want %d,%v", cpu, hi, mem, got, gok, want, wok)
				}
			}
			var each []int
			ix.Each(cpu, mem, skip, func(i int) { each = append(each, i) })
			slices.Sort(each)
			var want []int
			for i := 0; i < n; i++ {
				if ref.ok(i, cpu, mem, skip) {
					want = append(want, i)
				}
			}
			if !slices.Equal(each, want) {
				t.Fatalf("Each(%d, %d) = %v want %v", cpu, mem, each, want)
			}
			up := ref.upNodes()
			if ix.Up() != len(up) {
				t.Fatalf("Up() = %d want %d", ix.Up(), len(up))
			}
			for k, i := range up {
				if got := ix.UpNode(k); got != i {
					t.Fatalf("UpNode(%d) = %d want %d", k, got, i)
				}
			}
			if m, ok := ix.MaxCPU(); ok != (len(up) > 0) || (ok && m != maxFree(c, up)) {
				t.Fatalf("MaxCPU = %d,%v", m, ok)
			}
			ix.check(t)
		}
	})
}

func maxFree(c *cluster.Cluster, up []int) int64 {
	m := int64(math.MinInt64)
	for _, i := range up {
		m = max(m, c.Node(i).CPUFree)
	}
	return m
}

// check verifies the blocks' invariants: key order across and within
// blocks, the rank lists holding the same entries, memory bounds exact.
func (ix *Index) check(t *rapid.T) {
	var prev *entry
	count := 0
	for k, b := range ix.blocks {
		if len(b.byKey) == 0 || len(b.byKey) != len(b.byRank) {
			t.Fatalf("block %d: %d keys, %d ranks", k, len(b.byKey), len(b.byRank))
		}
		m := int64(math.MinInt64)
		for j := range b.byKey {
			e := b.byKey[j]
			if prev != nil && keyCmp(*prev, e) >= 0 {
				t.Fatalf("block %d: keys out of order", k)
			}
			prev = &b.byKey[j]
			m = max(m, e.mem)
			if !ix.in[e.node] || ix.at[e.node] != e {
				t.Fatalf("block %d: entry %+v is not the node's", k, e)
			}
		}
		if m != b.maxMem || !slices.IsSortedFunc(b.byRank, rankCmp) {
			t.Fatalf("block %d: maxMem %d (want %d) or ranks unsorted", k, b.maxMem, m)
		}
		count += len(b.byKey)
	}
	if count != ix.Up() {
		t.Fatalf("%d entries in blocks, %d up", count, ix.Up())
	}
}
