package leader

import (
	"context"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestRetryLoopHandsBackAfterThePause: an evaluation a worker failed on
// is not handed back before the pause, then is once, and a new term
// forgets what the last one was to retry.
func TestRetryLoopHandsBackAfterThePause(t *testing.T) {
	r := newRig(t, Config{Workers: 1})
	r.l.broker.SetEnabled(true) // the broker of a term, without its loops
	e := &api.Evaluation{ID: "e1", Workload: "w", Status: api.EvalPending}
	r.l.retries.later(e, time.Now())
	r.l.requeue(context.Background())
	if ready, _, _ := r.l.BrokerStats(); ready != 0 {
		t.Fatal("handed back before the pause")
	}
	r.l.retries.later(e, time.Now().Add(-retryPause))
	r.l.requeue(context.Background())
	if ready, _, _ := r.l.BrokerStats(); ready != 1 {
		t.Fatalf("%d ready after the pause, want 1", ready)
	}
	r.l.retries.later(&api.Evaluation{ID: "e2", Workload: "v"}, time.Now().Add(-retryPause))
	r.l.retries.begin()
	r.l.requeue(context.Background())
	if ready, _, _ := r.l.BrokerStats(); ready != 1 {
		t.Fatalf("a new term handed back the last term's retry: %d ready", ready)
	}
}
