package server

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
)

// TestRetryFailedEvaluation: an evaluation whose scheduling panicked is
// stored failed and never run again by itself; once the scheduler is
// fixed, POST /v1/evaluations/{id}/retry runs it: it is placed, the event
// says so, and a retry of an evaluation that did not fail is refused.
func TestRetryFailedEvaluation(t *testing.T) {
	s := quietServer(t)
	registerNodes(t, s, 1)
	failed := &api.Evaluation{ID: "eval-0001-failed", Workload: "w", Priority: 50, Status: api.EvalFailed, TriggeredBy: "test",
		StatusDescription: "the scheduler panicked: index out of range\ngoroutine 12 [running]:"}
	w := &api.Workload{Name: "w", Priority: 50, Groups: []*api.TaskGroup{{Name: "g", Replicas: 2,
		Tasks: []*api.Task{{Name: "t", Driver: "mock", Command: []string{"x"}, Resources: api.Resources{CPUMilli: 100, MemoryBytes: 1 << 20}}}}}}
	if _, err := s.propose(&fsm.UpsertWorkload{Workload: w, Eval: failed}); err != nil {
		t.Fatal(err)
	}
	if status, er := call(t, s, "POST", "/v1/evaluations/eval-0001/retry", ""); status != http.StatusOK {
		t.Fatalf("retry: %d %+v", status, er)
	}
	waitFor(t, 10*time.Second, "the retried evaluation placed the workload", func() error {
		snap := s.State().Snapshot()
		if e := snap.Eval(failed.ID); e.Status != api.EvalComplete {
			return fmt.Errorf("evaluation %s", e.Status)
		}
		if n := len(snap.AllocsByWorkload("", "w")); n != 2 {
			return fmt.Errorf("%d allocations", n)
		}
		return nil
	})
	found := false
	for _, e := range s.State().Snapshot().Events(nil, "", "w") {
		found = found || e.Type == api.EventEvalRetried
	}
	if !found {
		t.Fatal("no evaluation-retried event")
	}
	status, er := call(t, s, "POST", "/v1/evaluations/"+failed.ID+"/retry", "")
	if status != http.StatusConflict || er.Code != "not-failed" {
		t.Fatalf("retry of a complete evaluation: %d %+v, want 409 not-failed", status, er)
	}
	if status, _ := call(t, s, "POST", "/v1/evaluations/nope/retry", ""); status != http.StatusNotFound {
		t.Fatalf("retry of an unknown evaluation: %d, want 404", status)
	}
}
