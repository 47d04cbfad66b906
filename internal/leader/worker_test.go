package leader

import (
	"context"
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
)

// workerWorkload registers a workload of replicas × cpu millicores without
// queueing its evaluation (it is stored complete), so that the test's own
// worker is the only one that schedules it.
func workerWorkload(t *testing.T, r *rig, name string, replicas int, cpu int64) {
	t.Helper()
	w := &api.Workload{Name: name, Priority: 50, Groups: []*api.TaskGroup{{Name: "g", Replicas: replicas,
		Tasks: []*api.Task{{Name: "t", Driver: "mock", Command: []string{"sleep"}, Resources: api.Resources{CPUMilli: cpu, MemoryBytes: 1 << 20}}}}}}
	placeholder := &api.Evaluation{ID: "reg-" + name, Workload: name, Status: api.EvalComplete}
	r.propose(&fsm.UpsertWorkload{Workload: w, Eval: placeholder})
}

// TestWorkerProcess runs one worker's process on evaluations the broker
// never saw: what it commits, the outcome it records with the plan, and
// the attempts it keeps for replay.
func TestWorkerProcess(t *testing.T) {
	tests := []struct {
		name        string
		replicas    int
		cpu         int64
		earlier     int // attempts the stored evaluation already holds
		wantBlocked bool
		wantPlaced  int
	}{
		{name: "fits", replicas: 3, cpu: 4000, wantPlaced: 3},
		{name: "does not fit", replicas: 2, cpu: 64000, wantBlocked: true},
		{name: "partly fits", replicas: 20, cpu: 4000, wantBlocked: true, wantPlaced: 16},
		{name: "re-queued keeps earlier attempts", replicas: 1, cpu: 1000, earlier: 2, wantPlaced: 1},
	}
	for k, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, Config{})
			r.lead()
			r.addNodes(2) // 32 cores each
			name := fmt.Sprintf("w%d", k)
			workerWorkload(t, r, name, tt.replicas, tt.cpu)
			e := &api.Evaluation{ID: "eval-" + name, Workload: name, Status: api.EvalPending, TriggeredBy: "test"}
			if tt.earlier > 0 {
				// Stored blocked, so that the server's own workers leave it.
				stored := *e
				stored.Status = api.EvalBlocked
				for a := range tt.earlier {
					stored.Attempts = append(stored.Attempts, api.ScheduleAttempt{Seed: int64(a)})
				}
				r.propose(&fsm.UpsertEvals{Evals: []*api.Evaluation{&stored}})
			}
			w := &worker{l: r.l}
			blocked, err := w.process(context.Background(), e)
			if err != nil {
				t.Fatal(err)
			}
			if blocked != tt.wantBlocked {
				t.Fatalf("blocked %v, want %v", blocked, tt.wantBlocked)
			}
			snap := r.f.State().Snapshot()
			live := 0
			for _, a := range snap.AllocsByWorkload("", name) {
				if !a.Terminal() {
					live++
				}
			}
			if live != tt.wantPlaced {
				t.Fatalf("%d allocations committed, want %d", live, tt.wantPlaced)
			}
			got := snap.Eval(e.ID)
			if got == nil {
				t.Fatal("the evaluation's outcome was not recorded")
			}
			wantStatus := api.EvalComplete
			if tt.wantBlocked {
				wantStatus = api.EvalBlocked
			}
			if got.Status != wantStatus || (tt.wantBlocked && len(got.Failures) == 0) || len(got.Explanations) == 0 {
				t.Fatalf("recorded %s with %d failures and %d explanations, want %s", got.Status, len(got.Failures), len(got.Explanations), wantStatus)
			}
			if len(got.Attempts) != tt.earlier+1 {
				t.Fatalf("%d attempts recorded, want %d", len(got.Attempts), tt.earlier+1)
			}
			try := got.Attempts[len(got.Attempts)-1]
			if try.Seed != evalSeed(e.ID, 0) || try.SnapshotIndex == 0 {
				t.Fatalf("attempt %+v: want seed %d from the evaluation id and the snapshot's index", try, evalSeed(e.ID, 0))
			}
		})
	}
}

// TestWorkerCompletesSuperseded: evaluations a newer one of the same
// workload replaced are recorded complete, saying by which, without the
// failures they may have had.
func TestWorkerCompletesSuperseded(t *testing.T) {
	r := newRig(t, Config{})
	old := &api.Evaluation{ID: "old", Workload: "w", Status: api.EvalBlocked, Failures: []api.GroupFailure{{Group: "g", Missing: 1}}}
	(&worker{l: r.l}).completeSuperseded([]*api.Evaluation{old}, "new")
	got := r.f.State().Snapshot().Eval("old")
	if got == nil || got.Status != api.EvalComplete || got.StatusDescription != "superseded by new" || got.Failures != nil {
		t.Fatalf("superseded evaluation recorded as %+v", got)
	}
}

// TestAppendAttempt keeps the newest api.MaxEvalAttempts attempts and never
// writes into the slice it was given (a stored evaluation's).
func TestAppendAttempt(t *testing.T) {
	var attempts []api.ScheduleAttempt
	for i := range api.MaxEvalAttempts + 3 {
		attempts = appendAttempt(attempts, api.ScheduleAttempt{Seed: int64(i)})
		if want := min(i+1, api.MaxEvalAttempts); len(attempts) != want {
			t.Fatalf("after %d attempts %d kept, want %d", i+1, len(attempts), want)
		}
	}
	if len(attempts) != api.MaxEvalAttempts {
		t.Fatalf("%d attempts kept, want %d", len(attempts), api.MaxEvalAttempts)
	}
	if first, last := attempts[0].Seed, attempts[len(attempts)-1].Seed; last != int64(api.MaxEvalAttempts+2) || first != 3 {
		t.Fatalf("kept seeds %d..%d, want 3..%d", first, last, api.MaxEvalAttempts+2)
	}
	stored := make([]api.ScheduleAttempt, 1, 8)
	_ = appendAttempt(stored, api.ScheduleAttempt{Seed: 42})
	if stored[:2][1].Seed == 42 {
		t.Fatal("appendAttempt wrote into the stored evaluation's slice")
	}
	if evalSeed("e", 0) == evalSeed("f", 0) || evalSeed("e", 1) != evalSeed("e", 0)+1 {
		t.Fatal("seeds: one per evaluation id, the next attempt the next seed")
	}
}
