package uitest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// Node is node i of a seeded cell: regions, zones and racks as a real cell
// has them (2 regions × 4 zones × racks of 40), two NUMA nodes of 16
// cores, and 4 GPUs on every tenth node.
func Node(i int) *api.Node {
	rack := i / 40
	id := fmt.Sprintf("node-%05d", i)
	n := &api.Node{ID: id, Name: id,
		Labels: map[string]string{"region": fmt.Sprintf("region-%d", rack%2), "zone": fmt.Sprintf("zone-%d", rack%8),
			"rack": fmt.Sprintf("rack-%03d", rack), "node": id},
		Capacity: api.Resources{CPUMilli: 32000, MemoryBytes: 128 << 30, DiskBytes: 1 << 40, NetMbps: 10000},
		NUMA:     []api.NUMANode{{ID: 0, CPUs: seq(0, 16), MemoryBytes: 64 << 30}, {ID: 1, CPUs: seq(16, 32), MemoryBytes: 64 << 30}},
	}
	if i%10 == 0 {
		n.Capacity.GPUs = 4
		for g := range 4 {
			n.GPUs = append(n.GPUs, api.GPU{ID: fmt.Sprint(g), Model: "H100", MemoryBytes: 80 << 30, NUMA: g / 2})
		}
	}
	return n
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// RegisterNodes registers nodes 0..n-1 (Node(i)) through the API, as their
// agents would, from workers in parallel (raft batches the writes).
func RegisterNodes(t testing.TB, c *servertest.Cell, n int) {
	t.Helper()
	const workers = 32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One client per worker: a client per node would leave a
			// connection per node open against the server's cap per address.
			cl := c.Client()
			for i := w; i < n; i += workers {
				node := Node(i)
				cl.Node = c.NodeIdentity(node.ID)
				if err := cl.RegisterNode(context.Background(), node); err != nil {
					errs <- fmt.Errorf("register %s: %w", node.ID, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
