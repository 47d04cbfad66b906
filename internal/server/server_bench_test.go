package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

func quietServer(tb testing.TB) *Server {
	tb.Helper()
	s, err := New(Config{DataDir: tb.TempDir(), HTTPAddr: "127.0.0.1:0", HeartbeatTTL: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for !s.IsLeader() {
		if time.Now().After(deadline) {
			tb.Fatal("no leader")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}

func registerNodes(tb testing.TB, s *Server, n int) {
	tb.Helper()
	for i := 0; i < n; i++ {
		node := &api.Node{ID: fmt.Sprintf("node-%05d", i), Name: fmt.Sprintf("n%d", i), Status: api.NodeReady,
			Labels:   map[string]string{"rack": fmt.Sprintf("r%d", i%20)},
			Capacity: api.Resources{CPUMilli: 32000, MemoryBytes: 128 << 30, DiskBytes: 1 << 40, NetMbps: 10000}}
		if _, err := s.propose(cmdUpsertNode, &upsertNodeCmd{Node: node}); err != nil {
			tb.Fatal(err)
		}
	}
}

func submit(tb testing.TB, s *Server, doc string) {
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

func waitPlaced(tb testing.TB, s *Server, workload string, want int) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for len(s.State().Snapshot().AllocsByWorkload(workload)) < want {
		if time.Now().After(deadline) {
			tb.Fatalf("only %d of %d placed", len(s.State().Snapshot().AllocsByWorkload(workload)), want)
		}
		time.Sleep(2 * time.Millisecond)
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
	const replicas = 10000
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("bench-%d", i)
		start := time.Now()
		submit(b, s, fmt.Sprintf(benchWorkload, name, replicas))
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
