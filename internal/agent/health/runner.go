package health

import (
	"context"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
)

// Prober runs one check once and says what it found. It is the only I/O
// of the package; implementations must honour ctx (the check's timeout)
// and may be called concurrently.
type Prober interface {
	Probe(ctx context.Context, t Target) Outcome
}

// Clock is the time source of a Runner; tests inject a fake one.
type Clock interface {
	Now() time.Time
	// After delivers once d has passed.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the real clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time                         { return time.Now() }
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Runner runs a Set's checks when they are due. It is safe for concurrent
// use: the task runners tell it when tasks start and stop from their own
// goroutines while Run probes.
type Runner struct {
	prober Prober
	clock  Clock
	// Changed is called (without the lock) after a check's status, or
	// the set of running tasks, changed: the agent reports the health.
	changed func()
	// Restart is called when a liveness check of task failed for good.
	restart func(task, reason string)

	mu   sync.Mutex
	set  *Set
	wake chan struct{}
}

// NewRunner returns a runner of set; changed and restart may be nil.
func NewRunner(set *Set, prober Prober, clock Clock, changed func(), restart func(task, reason string)) *Runner {
	if changed == nil {
		changed = func() {}
	}
	if restart == nil {
		restart = func(string, string) {}
	}
	return &Runner{set: set, prober: prober, clock: clock, changed: changed, restart: restart, wake: make(chan struct{}, 1)}
}

// TaskStarted and TaskStopped forward a task's transitions to the set
// and wake the loop, whose next due time moved.
func (r *Runner) TaskStarted(task string) {
	r.mu.Lock()
	r.set.TaskStarted(task, r.clock.Now())
	r.mu.Unlock()
	r.kick()
}

func (r *Runner) TaskStopped(task string) {
	r.mu.Lock()
	r.set.TaskStopped(task, r.clock.Now())
	r.mu.Unlock()
	r.kick()
}

func (r *Runner) kick() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Health is the allocation's health now.
func (r *Runner) Health() *api.AllocHealth {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.set.Health(r.clock.Now())
}

// Run probes due checks until ctx ends.
func (r *Runner) Run(ctx context.Context) {
	for {
		r.mu.Lock()
		next := r.set.Next()
		r.mu.Unlock()
		var due <-chan time.Time
		if !next.IsZero() {
			due = r.clock.After(max(next.Sub(r.clock.Now()), 0))
		}
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
			continue
		case <-due:
		}
		r.RunDue(ctx)
	}
}

// RunDue runs every check due now, concurrently, each under its timeout,
// records the outcomes at the time each finished, and calls the
// callbacks. It returns when all have finished.
func (r *Runner) RunDue(ctx context.Context) {
	r.mu.Lock()
	due := r.set.Due(r.clock.Now())
	targets := make([]Target, len(due))
	for k, i := range due {
		targets[k] = r.set.Target(i)
	}
	r.mu.Unlock()
	if len(due) == 0 {
		return
	}
	outcomes := make([]Outcome, len(due))
	var wg sync.WaitGroup
	for k := range due {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, targets[k].Check.Timeout)
			defer cancel()
			outcomes[k] = r.prober.Probe(pctx, targets[k])
			if pctx.Err() == context.DeadlineExceeded && !outcomes[k].OK {
				outcomes[k].Output = "timed out after " + targets[k].Check.Timeout.String()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	anyChanged := false
	type restartReq struct{ task, reason string }
	var restarts []restartReq
	r.mu.Lock()
	now := r.clock.Now()
	for k, i := range due {
		changed, why := r.set.Record(i, now, outcomes[k])
		anyChanged = anyChanged || changed
		if why != "" {
			restarts = append(restarts, restartReq{targets[k].Task, why})
		}
	}
	r.mu.Unlock()
	if anyChanged {
		r.changed()
	}
	for _, rr := range restarts {
		r.restart(rr.task, rr.reason)
	}
}
