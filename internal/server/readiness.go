package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-dev/strata/internal/fsm"
)

// readiness decides whether this server may answer from its state
// (invariant 7, decision 2 of the team's protocol). raft's AppliedIndex is
// not enough: it counts entries handed to the FSM's queue, not applied.
//
//   - A leader is ready once a raft.Barrier issued in its current term has
//     returned: every entry of earlier terms is then applied.
//   - A follower is ready once its FSM's own applied index reaches the
//     commit index it learned from a leader (in AppendEntries; raft's own
//     follower commit index is capped at the follower's last entry, so it
//     says nothing while the follower is still catching up).
//
// The follower condition is latched: once caught up, a follower serves
// ?stale reads from its state for good (they say how stale they may be),
// and everything else it forwards to the leader.
type readiness struct {
	raft     *raft.Raft
	logs     raft.LogStore
	fsm      *fsm.FSM
	observer *commitObserver // nil for the in-memory transport

	// leaderTerm is the term whose barrier completed on this server.
	leaderTerm atomic.Uint64
	caughtUp   atomic.Bool

	once  sync.Once
	ready chan struct{} // closed the first time the server is ready
}

func newReadiness(r *raft.Raft, logs raft.LogStore, f *fsm.FSM, obs *commitObserver) *readiness {
	return &readiness{raft: r, logs: logs, fsm: f, observer: obs, ready: make(chan struct{})}
}

// errNotReady is wrapped by readiness errors; the HTTP layer answers 503
// not-ready with Retry-After.
var errNotReady = errors.New("not ready")

// leaderEstablished records that a barrier issued in term completed.
func (r *readiness) leaderEstablished(term uint64) {
	r.leaderTerm.Store(term)
	r.caughtUp.Store(true)
	r.markReady()
}

func (r *readiness) markReady() { r.once.Do(func() { close(r.ready) }) }

// leader reports whether this server leads and has applied everything of
// earlier terms; nil means it may serve consistent reads and writes.
func (r *readiness) leader() error {
	if r.raft.State() != raft.Leader {
		return ErrNotLeader
	}
	if r.leaderTerm.Load() != r.raft.CurrentTerm() {
		return fmt.Errorf("%w: elected leader, still applying the log of earlier terms", errNotReady)
	}
	return nil
}

// local reports whether this server's state is caught up enough to answer
// from it: a ready leader, or a follower that caught up once.
func (r *readiness) local() error {
	if r.raft.State() == raft.Leader {
		return r.leader()
	}
	if r.caughtUp.Load() {
		return nil
	}
	if err := r.followerCaughtUp(); err != nil {
		return err
	}
	r.caughtUp.Store(true)
	r.markReady()
	return nil
}

// followerCaughtUp checks the follower condition once.
func (r *readiness) followerCaughtUp() error {
	if r.observer == nil {
		return fmt.Errorf("%w: no leader elected yet", errNotReady)
	}
	target := r.observer.leaderCommit(r.raft.CurrentTerm())
	if target == 0 {
		return fmt.Errorf("%w: no word from a leader yet", errNotReady)
	}
	if c := r.raft.CommitIndex(); c < target {
		return fmt.Errorf("%w: replicating the log: have %d of %d committed entries", errNotReady, c, target)
	}
	if a := r.raft.AppliedIndex(); a < target {
		return fmt.Errorf("%w: replaying the log: applied %d of %d entries", errNotReady, a, target)
	}
	last, err := r.lastCommandAtOrBefore(target)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotReady, err)
	}
	if a := r.fsm.AppliedIndex(); a < last {
		return fmt.Errorf("%w: replaying the log: the state has applied entry %d of %d", errNotReady, a, last)
	}
	return nil
}

// lastCommandAtOrBefore returns the index of the last command entry at or
// below index, the last one the FSM must have applied: raft hands the FSM
// only commands, not its own no-op, barrier or configuration entries. It
// returns 0 when every entry down to the last snapshot is of raft's own
// kinds; the snapshot is then restored, since raft counts it applied only
// after the restore.
func (r *readiness) lastCommandAtOrBefore(index uint64) (uint64, error) {
	snapIndex, _ := strconv.ParseUint(r.raft.Stats()["last_snapshot_index"], 10, 64)
	for i := index; i > snapIndex; i-- {
		var l raft.Log
		if err := r.logs.GetLog(i, &l); err != nil {
			if errors.Is(err, raft.ErrLogNotFound) {
				return 0, nil // compacted: covered by the snapshot
			}
			return 0, fmt.Errorf("read raft log entry %d: %w", i, err)
		}
		if l.Type == raft.LogCommand {
			return i, nil
		}
	}
	return 0, nil
}

// retryAfter is what a not-ready or not-leader answer tells clients to wait
// at most; Strata's own client retries sooner, with its own backoff.
const retryAfter = time.Second

// writeNotReady answers 503 not-ready with Retry-After.
func writeNotReady(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	msg := strings.TrimPrefix(err.Error(), errNotReady.Error()+": ")
	writeError(w, http.StatusServiceUnavailable, "not-ready", "this server is not ready to serve: "+msg+"; retry")
}

// commitObserver wraps a raft transport to learn the commit index leaders
// send in AppendEntries, which raft itself does not expose on a follower.
type commitObserver struct {
	raft.Transport
	consumer chan raft.RPC
	stop     chan struct{}

	mu     sync.Mutex
	term   uint64
	commit uint64
}

func newCommitObserver(t raft.Transport) *commitObserver {
	o := &commitObserver{Transport: t, consumer: make(chan raft.RPC), stop: make(chan struct{})}
	go o.relay()
	return o
}

var (
	_ raft.Transport   = (*commitObserver)(nil)
	_ raft.WithClose   = (*commitObserver)(nil)
	_ raft.WithPreVote = (*commitObserver)(nil)
)

func (o *commitObserver) relay() {
	in := o.Transport.Consumer()
	for {
		select {
		case rpc := <-in:
			if req, ok := rpc.Command.(*raft.AppendEntriesRequest); ok {
				o.observe(req.Term, req.LeaderCommitIndex)
			}
			select {
			case o.consumer <- rpc:
			case <-o.stop:
				return
			}
		case <-o.stop:
			return
		}
	}
}

func (o *commitObserver) observe(term, commit uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case term > o.term:
		o.term, o.commit = term, commit
	case term == o.term && commit > o.commit:
		o.commit = commit
	}
}

// leaderCommit returns the newest commit index a leader of term or later
// sent, 0 if none did.
func (o *commitObserver) leaderCommit(term uint64) uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.term < term {
		return 0
	}
	return o.commit
}

// Consumer is the channel raft reads RPCs from, after they were observed.
func (o *commitObserver) Consumer() <-chan raft.RPC { return o.consumer }

// RequestPreVote passes pre-vote requests through when the inner transport
// supports them.
func (o *commitObserver) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	if pv, ok := o.Transport.(raft.WithPreVote); ok {
		return pv.RequestPreVote(id, target, args, resp)
	}
	return errors.New("transport does not support pre-vote")
}

// Close stops the relay and closes the inner transport.
func (o *commitObserver) Close() error {
	select {
	case <-o.stop:
	default:
		close(o.stop)
	}
	if c, ok := o.Transport.(raft.WithClose); ok {
		return c.Close()
	}
	return nil
}
