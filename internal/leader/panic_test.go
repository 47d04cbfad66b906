package leader

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/scheduler"
)

// TestSchedulerPanicFailsOnlyItsEvaluation reproduces issue 17's first
// defect: a panic in the scheduler killed the leader, and the next leader
// took the same evaluation and died the same way. The evaluation whose
// scheduling panics is stored failed, with the panic and its stack, and
// counted; the other workload is still placed; and a new term does not
// take the failed evaluation again.
func TestSchedulerPanicFailsOnlyItsEvaluation(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := newRig(t, Config{Metrics: reg, schedule: func(s scheduler.State, e *api.Evaluation, o scheduler.Options) *api.Plan {
		if e.Workload == "boom" {
			var groups map[string]int
			groups["g"]++ // a nil map: the kind of bug a scheduler change brings
		}
		return scheduler.Schedule(s, e, o)
	}})
	r.addNodes(1)
	for _, name := range []string{"boom", "fine"} {
		r.propose(&fsm.UpsertWorkload{Workload: &api.Workload{Name: name, Priority: 50, Groups: []*api.TaskGroup{{Name: "g", Replicas: 1,
			Tasks: []*api.Task{{Name: "t", Driver: "mock", Command: []string{"x"}, Resources: api.Resources{CPUMilli: 100, MemoryBytes: 1 << 20}}}}}},
			Eval: &api.Evaluation{ID: "eval-" + name, Workload: name, Priority: 50, Status: api.EvalPending, TriggeredBy: "test"}})
	}
	end := r.lead()
	waitFor(t, 10*time.Second, "the fine workload placed and the panicking evaluation failed", func() error {
		snap := r.f.State().Snapshot()
		if len(snap.AllocsByWorkload("", "fine")) != 1 {
			return errors.New("fine is not placed")
		}
		if e := snap.Eval("eval-boom"); e == nil || e.Status != api.EvalFailed {
			return fmt.Errorf("eval-boom is %+v", e)
		}
		return nil
	})
	e := r.f.State().Snapshot().Eval("eval-boom")
	if !strings.Contains(e.StatusDescription, "assignment to entry in nil map") || !strings.Contains(e.StatusDescription, "panic_test.go") {
		t.Fatalf("the failed evaluation does not say what panicked, and where: %q", e.StatusDescription)
	}
	if got := metricValue(t, reg, "strata_scheduler_panics_total"); got != 1 {
		t.Fatalf("strata_scheduler_panics_total %v, want 1", got)
	}
	// A new term restores the broker from the state: the failed
	// evaluation is not queued again (nor is anything else: fine's is
	// complete).
	end()
	r.lead()
	if ready, inflight, blocked := r.l.BrokerStats(); ready+inflight+blocked != 0 {
		t.Fatalf("the next term queued %d, runs %d, parks %d evaluations; want none", ready, inflight, blocked)
	}
}
