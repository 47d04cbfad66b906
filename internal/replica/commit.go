package replica

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Commit hands encoded entries to raft in order, together, so that they
// share its batches, and returns the index of the last and the FSM's
// answer to it once this server applied it (fsm.Log). An error names the
// first entry that failed; the entries before it are committed. An FSM
// answer that is an error is returned as the error. name labels the
// entries in errors.
func (r *Replica) Commit(name string, entries ...[]byte) (uint64, any, error) {
	start := time.Now()
	defer func() { r.metrics.commit.Observe(time.Since(start).Seconds()) }()
	futures := make([]raft.ApplyFuture, len(entries))
	for i, buf := range entries {
		futures[i] = r.raft.raft.Apply(buf, 30*time.Second)
	}
	var index uint64
	var resp any
	for i, f := range futures {
		if err := r.raft.wait(f); err != nil {
			return 0, nil, commitError(name, i, err)
		}
		resp = f.Response()
		if err, ok := resp.(error); ok && err != nil {
			return 0, nil, fmt.Errorf("apply %s: %w", name, err)
		}
		index = f.Index()
	}
	return index, resp, nil
}

// commitError maps raft's error for entry i of a commit: ErrNotLeader (a
// client may retry) only when nothing of it can have been applied,
// ErrOutcomeUnknown when some of it may have been.
func commitError(name string, i int, err error) error {
	notAppended := errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrEnqueueTimeout)
	switch {
	case notAppended && i == 0:
		return ErrNotLeader
	case notAppended, errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrRaftShutdown), errors.Is(err, raft.ErrAbortedByRestore):
		return fmt.Errorf("raft apply %s (entry %d): %w: %v", name, i+1, ErrOutcomeUnknown, err)
	}
	return fmt.Errorf("raft apply %s: %w", name, err)
}

// raftErr maps raft's not-leader errors to ErrNotLeader.
func raftErr(err error) error {
	if errors.Is(err, raft.ErrNotLeader) {
		return ErrNotLeader
	}
	return err
}
