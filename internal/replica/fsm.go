package replica

import (
	"fmt"
	"io"

	"github.com/hashicorp/raft"
)

// raftFSM adapts an FSM to raft: raft hands it every entry, the FSM only
// commands.
type raftFSM struct{ f FSM }

var _ raft.FSM = raftFSM{}

func (r raftFSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	return r.f.Apply(l.Index, l.Data)
}

func (r raftFSM) Snapshot() (raft.FSMSnapshot, error) { return raftSnapshot{r.f.Snapshot()}, nil }

func (r raftFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return r.f.Restore(rc)
}

type raftSnapshot struct{ s Snapshot }

func (s raftSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.s.Encode(sink); err != nil {
		sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	return sink.Close()
}

func (raftSnapshot) Release() {}
