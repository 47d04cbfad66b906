package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// drainReplicas is how many replicas TestDrainUnderBudgetWithExecTasks
// drains: 50 (the measurement in docs/benchmarks.md, about 40 s on 2
// vCPU), or STRATA_E2E_DRAIN_REPLICAS.
func drainReplicas(t *testing.T) int {
	s := os.Getenv("STRATA_E2E_DRAIN_REPLICAS")
	if s == "" {
		return 50
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 200 {
		t.Fatalf("STRATA_E2E_DRAIN_REPLICAS=%q: want 1-200", s)
	}
	return n
}

// availabilityWatch samples a group's availability on every change of the
// workload's allocations (blocking queries): unavailable is replicas minus
// the indices served by a running allocation wanted running.
type availabilityWatch struct {
	mu             sync.Mutex
	maxUnavailable int
	maxMoving      int // replacements placed and not yet running
	samples        int
	cancel         context.CancelFunc
	done           chan struct{}
}

func (c *cell) watchAvailability(workload string, replicas int) *availabilityWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &availabilityWatch{cancel: cancel, done: make(chan struct{})}
	cl := c.newClient(c.addr)
	go func() {
		defer close(w.done)
		var index uint64
		for ctx.Err() == nil {
			allocs, meta, err := cl.Allocations(ctx, workload, &api.Query{Index: index, Wait: 5 * time.Second})
			if err != nil {
				continue
			}
			index = meta.Index
			served, moving := map[int]bool{}, 0
			for _, a := range allocs {
				switch {
				case a.DesiredStatus != api.DesiredRun:
				case a.ClientStatus == api.AllocRunning:
					served[a.Index] = true
				case a.ClientStatus == api.AllocPending:
					moving++
				}
			}
			w.mu.Lock()
			w.samples++
			w.maxUnavailable = max(w.maxUnavailable, replicas-len(served))
			w.maxMoving = max(w.maxMoving, moving)
			w.mu.Unlock()
		}
	}()
	c.t.Cleanup(w.stop)
	return w
}

func (w *availabilityWatch) stop() { w.cancel(); <-w.done }

func (w *availabilityWatch) result() (maxUnavailable, maxMoving, samples int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxUnavailable, w.maxMoving, w.samples
}

// TestDrainUnderBudgetWithExecTasks drains a node running every replica
// of a group with `disruption: {maxUnavailable: 1}`, real exec tasks, and
// measures the time to empty it while sampling the group on every
// allocation change: never more than one replica out of service (with
// replacement first, none), never more than one move at once.
func TestDrainUnderBudgetWithExecTasks(t *testing.T) {
	replicas := drainReplicas(t)
	c := newCell(t, 10*time.Second)
	c.startAgent("a1", "--cpu-total", "4000", "--memory-total", "4GiB")
	c.mustStrata("run", "-f", c.writeSpec("fleet", fmt.Sprintf(`
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: fleet}
spec:
  groups:
    - name: g
      replicas: %d
      disruption: {maxUnavailable: 1}
      tasks:
        - name: t
          command: ["sleep", "600"]
          resources: {cpu: 20m, memory: 16Mi}
`, replicas)), "--wait", "--timeout", "120s", "--min-healthy", "1s")
	c.startAgent("a2", "--cpu-total", "4000", "--memory-total", "4GiB")
	w := c.watchAvailability("fleet", replicas)
	c.eventually(10*time.Second, "the watch sees every replica", func() error {
		if _, _, n := w.result(); n == 0 {
			return fmt.Errorf("no sample yet")
		}
		return nil
	})

	start := time.Now()
	out := c.mustStrata("node", "drain", "a1", "--watch", "--deadline", "10m")
	took := time.Since(start)
	if !strings.Contains(out, "drain of a1 done") {
		t.Fatalf("drain --watch said:\n%s", out)
	}
	c.eventually(10*time.Second, "every replica runs on a2", func() error {
		running := runningAllocs(c.allocs("fleet"))
		if len(running) != replicas {
			return fmt.Errorf("%d running", len(running))
		}
		for _, a := range running {
			if a.NodeName != "a2" {
				return fmt.Errorf("replica %d on %s", a.Index, a.NodeName)
			}
		}
		return nil
	})
	w.stop()
	maxDown, maxMoving, samples := w.result()
	t.Logf("drain of %d exec replicas (maxUnavailable 1): %v to empty a1 (%v per move); most replicas out of service at once %d, most moves at once %d, over %d samples",
		replicas, took.Round(100*time.Millisecond), (took / time.Duration(replicas)).Round(time.Millisecond), maxDown, maxMoving, samples)
	if maxDown > 1 {
		t.Errorf("%d replicas out of service at once, want at most maxUnavailable = 1", maxDown)
	}
	if maxMoving > 1 {
		t.Errorf("%d moves at once, want at most maxUnavailable = 1", maxMoving)
	}
}
