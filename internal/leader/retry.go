package leader

import (
	"context"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
)

// retryPause is how long an evaluation a worker failed on waits before it
// is handed to the broker again.
const retryPause = time.Second

// retries holds the evaluations a worker failed on for a reason of the
// moment (a raft error, not the scheduler): they are still pending in the
// state, and the "retry" loop hands them to the broker again after
// retryPause. A newer evaluation of the workload supersedes them meanwhile.
// They are the term's: a new term forgets them (it restores every pending
// evaluation from the state anyway).
type retries struct {
	mu  sync.Mutex
	due map[string]pendingRetry // by evaluation id
}

type pendingRetry struct {
	eval *api.Evaluation
	at   time.Time
}

func newRetries() *retries { return &retries{due: map[string]pendingRetry{}} }

// later hands e to the broker again retryPause from now.
func (r *retries) later(e *api.Evaluation, now time.Time) {
	r.mu.Lock()
	r.due[e.ID] = pendingRetry{eval: e, at: now.Add(retryPause)}
	r.mu.Unlock()
}

func (r *retries) begin() {
	r.mu.Lock()
	r.due = map[string]pendingRetry{}
	r.mu.Unlock()
}

// requeue is the "retry" loop's step: it hands every due evaluation to
// the broker.
func (l *Leader) requeue(context.Context) error {
	now := time.Now()
	var ready []*api.Evaluation
	l.retries.mu.Lock()
	for id, p := range l.retries.due {
		if !now.Before(p.at) {
			ready = append(ready, p.eval)
			delete(l.retries.due, id)
		}
	}
	l.retries.mu.Unlock()
	for _, e := range ready {
		l.broker.Enqueue(e)
	}
	return nil
}
