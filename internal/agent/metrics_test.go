package agent

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// agentMetric returns the value of the sample named exactly sample on the
// agent's /metrics, and whether it is there.
func agentMetric(t *testing.T, ag *testAgent, sample string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(ag.Node().HTTPAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && name == sample {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("sample %q: %v", sc.Text(), err)
			}
			return v, true
		}
	}
	return 0, false
}

// A running exec task's CPU and memory are read from its cgroup, and the
// CPU counter moves while the task burns CPU.
func TestMetricsReportTaskUsageFromCgroups(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	if v, ok := agentMetric(t, ag, "strata_agent_allocations"); !ok || v != 0 {
		t.Fatalf("strata_agent_allocations = %v (present %v) before any allocation", v, ok)
	}
	alloc := newAlloc(ag.NodeID()).
		task("burn", api.Resources{CPUMilli: 200, MemoryBytes: 64 << 20}, "sh", "-c", "while :; do :; done").build()
	srv.put(alloc)
	waitTask(t, srv, alloc.ID, "burn", "task running", running)

	labels := fmt.Sprintf(`{alloc="%s",task="burn",workload="%s"}`, alloc.ID, alloc.Workload)
	var first float64
	eventually(t, 10*time.Second, "CPU usage reported", func() bool {
		v, ok := agentMetric(t, ag, "strata_task_cpu_seconds_total"+labels)
		first = v
		return ok && v > 0
	})
	eventually(t, 20*time.Second, "CPU usage growing", func() bool {
		v, _ := agentMetric(t, ag, "strata_task_cpu_seconds_total"+labels)
		return v > first
	})
	if v, ok := agentMetric(t, ag, "strata_task_memory_bytes"+labels); !ok || v <= 0 {
		t.Fatalf("strata_task_memory_bytes = %v (present %v), want > 0", v, ok)
	}
	if v, _ := agentMetric(t, ag, "strata_agent_allocations"); v != 1 {
		t.Fatalf("strata_agent_allocations = %v, want 1", v)
	}
	// What the task was allocated, beside what it uses; and the node's
	// capacity, for "allocated against used" on the dashboards.
	if v, _ := agentMetric(t, ag, "strata_task_cpu_allocated_cores"+labels); v != 0.2 {
		t.Fatalf("strata_task_cpu_allocated_cores = %v, want 0.2", v)
	}
	if v, _ := agentMetric(t, ag, "strata_task_memory_allocated_bytes"+labels); v != 64<<20 {
		t.Fatalf("strata_task_memory_allocated_bytes = %v, want %d", v, 64<<20)
	}
	if v, ok := agentMetric(t, ag, "strata_node_cpu_capacity_cores"); !ok || v != float64(ag.Node().Capacity.CPUMilli)/1000 {
		t.Fatalf("strata_node_cpu_capacity_cores = %v (present %v), want the node's %d millicores", v, ok, ag.Node().Capacity.CPUMilli)
	}
	srv.setDesired(alloc.ID, api.DesiredStop)
}
