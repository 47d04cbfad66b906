package replica

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
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
	fsm      FSM
	observer *commitObserver // nil for the in-memory transport

	// leaderTerm is the term whose barrier completed on this server.
	leaderTerm atomic.Uint64
	caughtUp   atomic.Bool

	once  sync.Once
	ready chan struct{} // closed the first time the server is ready
}

func newReadiness(r *raft.Raft, logs raft.LogStore, f FSM, obs *commitObserver) *readiness {
	return &readiness{raft: r, logs: logs, fsm: f, observer: obs, ready: make(chan struct{})}
}

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
		return fmt.Errorf("%w: elected leader, still applying the log of earlier terms", ErrNotReady)
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
		return fmt.Errorf("%w: no leader elected yet", ErrNotReady)
	}
	target := r.observer.leaderCommit(r.raft.CurrentTerm())
	if target == 0 {
		return fmt.Errorf("%w: no word from a leader yet", ErrNotReady)
	}
	if c := r.raft.CommitIndex(); c < target {
		return fmt.Errorf("%w: replicating the log: have %d of %d committed entries", ErrNotReady, c, target)
	}
	if a := r.raft.AppliedIndex(); a < target {
		return fmt.Errorf("%w: replaying the log: applied %d of %d entries", ErrNotReady, a, target)
	}
	last, err := r.lastCommandAtOrBefore(target)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotReady, err)
	}
	if a := r.fsm.AppliedIndex(); a < last {
		return fmt.Errorf("%w: replaying the log: the state has applied entry %d of %d", ErrNotReady, a, last)
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
