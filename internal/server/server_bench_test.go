package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/state"
)

func quietServer(tb testing.TB) *Server {
	tb.Helper()
	return quietServerIn(tb, tb.TempDir())
}

// quietServerIn starts a one-server cell on dir and waits until it leads.
func quietServerIn(tb testing.TB, dir string) *Server {
	tb.Helper()
	s, err := New(Config{DataDir: dir, HTTPAddr: "127.0.0.1:0", HeartbeatTTL: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	select {
	case <-s.Ready():
	case <-time.After(20 * time.Second):
		tb.Fatal("server not ready after 20s")
	}
	return s
}

func registerNodes(tb testing.TB, s *Server, n int) {
	tb.Helper()
	registerCell(tb, s, n, func(i int) map[string]string { return map[string]string{"rack": fmt.Sprintf("r%d", i%20)} })
}

// registerCell registers n nodes of 32 cores with the labels labels(i),
// proposing them from several goroutines so that raft batches the writes.
func registerCell(tb testing.TB, s *Server, n int, labels func(i int) map[string]string) {
	tb.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				node := &api.Node{ID: fmt.Sprintf("node-%05d", i), Name: fmt.Sprintf("n%d", i), Status: api.NodeReady,
					Labels:   labels(i),
					Capacity: api.Resources{CPUMilli: 32000, MemoryBytes: 128 << 30, DiskBytes: 1 << 40, NetMbps: 10000}}
				key := &state.NodeKey{NodeID: node.ID, Verifier: nodeauth.Verifier(testNodeSecret(node.ID))}
				if _, err := s.propose(&fsm.UpsertNode{Node: node, Key: key}); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

// testNodeSecret is the node secret registerCell gives node id.
func testNodeSecret(id string) string { return "test-node-secret-0123456789abcdef-" + id }

func submit(tb fataler, s *Server, doc string) {
	tb.Helper()
	resp, err := http.Post(s.Addr()+"/v1/workloads", "application/yaml", strings.NewReader(doc))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		tb.Fatalf("register: %d %s", resp.StatusCode, b)
	}
}

// waitPlaced waits until the workload has want allocations, woken by
// the store when allocations change rather than polling it.
func waitPlaced(tb testing.TB, s *Server, workload string, want int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var seen uint64
	for {
		n := 0
		idx, err := s.State().Query(ctx, seen, time.Second, func(snap *state.Snapshot, ws memdb.WatchSet) (uint64, error) {
			n = len(snap.AllocsByWorkloadWatch(ws, "", workload))
			return snap.TableIndex(ws, state.TableAllocs), nil
		})
		if n >= want {
			return
		}
		if err != nil {
			tb.Fatalf("only %d of %d placed: %v", n, want, err)
		}
		seen = idx
	}
}

const benchWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  groups:
    - name: web
      replicas: %d
      placement:
        require: ["rack!=r0"]
      tasks:
        - name: t
          driver: mock
          command: ["x"]
          resources: {cpu: 250m, memory: 256Mi}
`

// BenchmarkServerPlacements measures placements per second through the
// whole control plane: HTTP → raft → broker → worker → scheduler → plan
// applier (CheckNode per node) → raft → FSM → state.
func BenchmarkServerPlacements(b *testing.B) {
	s := quietServer(b)
	registerNodes(b, s, 1000)
	benchServer(b, s, benchWorkload, 10000)
}

// zonedCell labels node i of a larger cell: racks of 40 dealt over three
// zones.
func zonedCell(i int) map[string]string {
	rack := i / 40
	return map[string]string{"rack": fmt.Sprintf("r%d", rack), "zone": fmt.Sprintf("z%d", rack%3)}
}

// BenchmarkServerPlacements10kNodes is BenchmarkServerPlacements on a
// cell of 10,000 nodes.
func BenchmarkServerPlacements10kNodes(b *testing.B) {
	s := quietServer(b)
	registerCell(b, s, 10000, zonedCell)
	benchServer(b, s, benchWorkload, 10000)
}

const benchSpreadWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  groups:
    - name: web
      replicas: %d
      placement:
        require: ["rack!=r0"]
        spread:
          - {key: zone, maxSkew: 1}
          - {key: rack, maxSkew: 1, mode: soft, weight: 30}
      tasks:
        - name: t
          driver: mock
          command: ["x"]
          resources: {cpu: 250m, memory: 256Mi}
`

// BenchmarkServerPlacementsSpread10kNodes places a workload with a hard
// zone spread and a soft rack spread on 10,000 nodes.
func BenchmarkServerPlacementsSpread10kNodes(b *testing.B) {
	s := quietServer(b)
	registerCell(b, s, 10000, zonedCell)
	benchServer(b, s, benchSpreadWorkload, 10000)
}

func benchServer(b *testing.B, s *Server, doc string, replicas int) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("bench-%d", i)
		start := time.Now()
		submit(b, s, fmt.Sprintf(doc, name, replicas))
		waitPlaced(b, s, name, replicas)
		b.ReportMetric(float64(replicas)/time.Since(start).Seconds(), "placements/s")
	}
}

// TestServerPlacesThroughRaft is the benchmark's path as a test: every
// replica is committed, no node is overcommitted, and hard rules hold.
func TestServerPlacesThroughRaft(t *testing.T) {
	s := quietServer(t)
	registerNodes(t, s, 20)
	submit(t, s, fmt.Sprintf(benchWorkload, "w", 300))
	waitPlaced(t, s, "w", 300)
	snap := s.State().Snapshot()
	for _, n := range snap.Nodes() {
		if n.Allocated.Exceeds(n.Capacity) != "" {
			t.Fatalf("node %s overcommitted: %+v > %+v", n.ID, n.Allocated, n.Capacity)
		}
		if n.Labels["rack"] == "r0" && len(snap.AllocsByNode(n.ID)) > 0 {
			t.Fatalf("node %s violates rack!=r0", n.ID)
		}
	}
}
