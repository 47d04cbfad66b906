package replica

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-dev/strata/internal/backoff"
)

// leadership owns this server's terms as leader. One goroutine (run)
// begins and ends them, in the order raft reports leadership, and nothing
// else does: a snapshot restore asks it for a new term (restart), Close
// cancels its context. It holds no lock: the state below is its own but
// for term, which readers load atomically.
//
// Beginning a term waits for a raft barrier of that term (up to 30s, and
// again while it fails), then calls Leadership.Lead. Both waits end with
// the replica's context, so Close never waits for a barrier; and no lock
// is held across them (before, the server held its leader mutex across the
// barrier, and Close, waiting for that mutex, waited out the barrier).
type leadership struct {
	r *Replica
	// term holds the context of the current term (nil when not leading);
	// reads served as leader end with it.
	term atomic.Pointer[context.Context]
	// cancel ends the current term; nil when not leading. run's own.
	cancel context.CancelFunc

	restarts chan chan struct{}
	started  atomic.Bool
	done     chan struct{} // closed when run returns
}

func newLeadership(r *Replica) *leadership {
	return &leadership{r: r, restarts: make(chan chan struct{}), done: make(chan struct{})}
}

// run follows raft's leadership until ctx ends, then ends the term.
func (l *leadership) run(ctx context.Context) {
	l.started.Store(true)
	defer close(l.done)
	defer l.end()
	ch := l.r.raft.raft.LeaderCh()
	if l.r.IsLeader() {
		l.begin(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case leader := <-ch:
			if leader {
				l.begin(ctx)
			} else {
				l.end()
			}
		case reply := <-l.restarts:
			// A restored snapshot: the leader's loops hold the old state
			// (queued evaluations, node deadlines); a new term starts them
			// on the restored one.
			l.end()
			l.begin(ctx)
			close(reply)
		}
	}
}

// wait returns once run has returned (at once if it never ran).
func (l *leadership) wait() {
	if l.started.Load() {
		<-l.done
	}
}

// restart ends the current term and begins another, on run's goroutine;
// it returns once that is done, or ctx ends.
func (l *leadership) restart(ctx context.Context) {
	reply := make(chan struct{})
	select {
	case l.restarts <- reply:
	case <-ctx.Done():
		return
	case <-l.done:
		return
	}
	select {
	case <-reply:
	case <-ctx.Done():
	case <-l.done:
	}
}

// begin starts a term: a barrier of the term first, so that everything
// committed in earlier terms is applied; then the control plane's Lead;
// only then does the server answer as the leader.
func (l *leadership) begin(ctx context.Context) {
	if l.cancel != nil {
		return
	}
	r := l.r
	term := r.raft.raft.CurrentTerm()
	for {
		err := r.raft.waitCtx(ctx, r.raft.raft.Barrier(30*time.Second))
		if err == nil {
			break
		}
		if ctx.Err() != nil || !r.IsLeader() {
			return
		}
		r.logger.Error("barrier on leadership; retrying", "err", err)
		if !backoff.Sleep(ctx, time.Second) {
			return
		}
	}
	if !r.IsLeader() || r.raft.raft.CurrentTerm() != term {
		return // deposed meanwhile; the next LeaderCh signal decides
	}
	termCtx, cancel := context.WithCancel(ctx)
	for {
		err := r.lead.Lead(termCtx)
		if err == nil {
			break
		}
		if ctx.Err() != nil || !r.IsLeader() {
			cancel()
			return
		}
		r.logger.Error("begin the leader's term; retrying", "err", err)
		if !backoff.Sleep(ctx, time.Second) {
			cancel()
			return
		}
	}
	l.cancel = cancel
	l.term.Store(&termCtx)
	r.ready.leaderEstablished(term)
	r.logger.Info("leadership established", "term", term)
	if r.raft.port != nil && !r.memberAtAddr() {
		// Our address changed (a lone server given --raft-addr, a new port):
		// tell the configuration, or the others cannot reach us.
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if err := r.addVoter(raft.ServerID(r.cfg.ID), r.raft.addr()); err != nil {
				r.logger.Error("update this server's raft address", "addr", r.raft.addr(), "err", err)
			}
		}()
	}
}

// end ends the current term, if any: its context first (the loops stop),
// then the control plane's Follow.
func (l *leadership) end() {
	if l.cancel == nil {
		return
	}
	l.term.Store(nil)
	l.cancel()
	l.cancel = nil
	l.r.lead.Follow()
}

// termContext is the context of the current term, nil when not leading.
func (l *leadership) termContext() context.Context {
	if p := l.term.Load(); p != nil {
		return *p
	}
	return nil
}

// LostLeadership reports whether a request's context ended because this
// server stopped leading (rather than because the client went away).
func LostLeadership(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), ErrNotLeader)
}
