package fsm

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/strata-dev/strata/internal/state"
)

// FSM applies committed entries to the cell's state store. Apply is
// deterministic: it reads only the entry and the state, so every server
// that applies the same log holds the same state.
//
// Apply, Snapshot and Restore are called by one goroutine at a time (the
// replica's); the read methods are safe from any goroutine.
type FSM struct {
	table *Table
	log   *slog.Logger

	mu    sync.RWMutex
	store *state.Store
	// replaced is closed when a snapshot restore swaps the store, waking
	// blocking queries that watch the old one.
	replaced chan struct{}
	// applied is the index of the last entry Apply finished: the FSM's own
	// count, unlike raft's applied index, which counts entries queued for
	// it.
	applied atomic.Uint64

	// OnApply, when set, is told what each applied entry asks of the
	// loops (Effects). It runs on the apply goroutine: it must not block.
	OnApply func(index uint64, e Effects)
	// BeforeApply, when set, runs before each entry (tests hold the
	// replay at a chosen index with it).
	BeforeApply func(index uint64)
}

// New returns an FSM over an empty store that applies the server's
// command table.
func New(logger *slog.Logger) *FSM {
	return &FSM{table: Commands, log: logger, store: state.New(), replaced: make(chan struct{})}
}

// State returns the current store. A snapshot restore replaces the store,
// so callers should not hold it across long periods.
func (f *FSM) State() *state.Store {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.store
}

// Replaced returns a channel closed when the current store is replaced.
func (f *FSM) Replaced() <-chan struct{} {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.replaced
}

// AppliedIndex is the index of the last entry the FSM has applied (or
// refused) in full.
func (f *FSM) AppliedIndex() uint64 { return f.applied.Load() }

// Apply applies the entry at index and returns nil, an error, or the
// command's answer (Registered, Stopped, Migrated). An entry that does
// not decode, or whose command fails, changes nothing.
func (f *FSM) Apply(index uint64, entry []byte) any {
	defer f.applied.Store(index)
	if len(entry) == 0 {
		return nil
	}
	if f.BeforeApply != nil {
		f.BeforeApply(index)
	}
	c, body, err := f.table.Decode(entry)
	if err != nil {
		f.log.Error("undecodable raft entry", "index", index, "type", f.table.Name(Type(entry[0])), "err", err)
		return err
	}
	var answer any
	err = f.State().Write(index, func(w *state.WriteTxn) error {
		// Events are derived before the change, so they can say what it did.
		events := c.events(w.Snapshot(), body)
		var err error
		if answer, err = c.apply(w, body); err != nil {
			return err
		}
		for _, e := range events {
			if err := w.AddEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if f.OnApply != nil {
		f.OnApply(index, c.effects(body))
	}
	return answer
}

// Snapshot captures the store at this point for raft's snapshots and the
// operator's snapshot files.
func (f *FSM) Snapshot() *Snapshot {
	return &Snapshot{snap: f.State().Snapshot()}
}

// Restore replaces the store with a snapshot's contents; an error leaves
// the store as it was.
func (f *FSM) Restore(r io.Reader) error {
	s, err := decodeSnapshot(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.store = s
	close(f.replaced)
	f.replaced = make(chan struct{})
	f.mu.Unlock()
	return nil
}

// Verify checks that r holds a whole snapshot in the FSM's encoding,
// without installing it.
func (f *FSM) Verify(r io.Reader) error {
	if _, err := decodeSnapshot(r); err != nil {
		return fmt.Errorf("verify snapshot: %w", err)
	}
	return nil
}
