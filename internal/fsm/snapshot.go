package fsm

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/strata-dev/strata/internal/state"
)

// Snapshot is the store at one index, in the FSM's snapshot encoding:
// raft's snapshots and operator snapshot files share it.
type Snapshot struct{ snap *state.Snapshot }

// Index is the raft index the snapshot's state reflects.
func (s *Snapshot) Index() uint64 { return s.snap.Index() }

// Encode writes the snapshot (state.Dump's encoding, one allocation at a
// time) to w.
func (s *Snapshot) Encode(w io.Writer) error { return s.snap.Dump().Encode(w) }

// decodeSnapshot reads a snapshot into a new store; an error leaves
// nothing changed.
func decodeSnapshot(r io.Reader) (*state.Store, error) {
	var d state.Dump
	if err := json.NewDecoder(r).Decode(&d); err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", err)
	}
	return state.Restore(&d)
}
