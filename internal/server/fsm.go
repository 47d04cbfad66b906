package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// fsm applies committed raft entries to the state store. Apply must be
// deterministic: it reads only the entry and the current state.
type fsm struct {
	mu    sync.RWMutex
	store *state.Store
	// replaced is closed when a snapshot restore swaps the store, waking
	// blocking queries that watch the old one.
	replaced chan struct{}
	logger   *slog.Logger
	// onApply, when set, is told about every applied command (the leader's
	// loops use it to enqueue evaluations). It must not block.
	onApply func(t commandType, body any, index uint64)
	// beforeApply, when set, runs before each command (tests only).
	beforeApply func(index uint64)
	// applied is the index of the last command Apply finished: the FSM's own
	// count, unlike raft's AppliedIndex, which counts entries queued for it.
	applied atomic.Uint64
}

var _ raft.FSM = (*fsm)(nil)

func newFSM(logger *slog.Logger) *fsm {
	return &fsm{store: state.New(), logger: logger, replaced: make(chan struct{})}
}

// State returns the current store. A snapshot restore replaces the store,
// so callers should not cache it across long periods.
func (f *fsm) State() *state.Store {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.store
}

// Replaced returns a channel closed when the current store is replaced.
func (f *fsm) Replaced() <-chan struct{} {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.replaced
}

// AppliedIndex is the index of the last command the FSM has applied (or
// refused) in full.
func (f *fsm) AppliedIndex() uint64 { return f.applied.Load() }

// registered is the FSM's answer to an upsert-workload command: the version
// it gave the workload, in log order. The proposer reads it from the raft
// future (proposeFor); reading the store after the entry applied could
// already show a later submission's version.
type registered struct{ Version uint64 }

// stopped is the FSM's answer to a stop-workload command: whether the
// workload existed when the entry applied. The handler answers 404 from
// it, not from its own state before proposing: two concurrent purges would
// both have found the workload there, and a deposed leader that did not
// know it yet could answer 404 from its old state.
type stopped struct{ Found bool }

// Apply applies one committed log entry and returns nil, an error, or the
// command's answer (registered, stopped).
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	defer f.applied.Store(l.Index)
	if len(l.Data) == 0 {
		return nil
	}
	if f.beforeApply != nil {
		f.beforeApply(l.Index)
	}
	t := commandType(l.Data[0])
	body, err := decodeBody(t, l.Data[1:])
	if err != nil {
		f.logger.Error("undecodable raft entry", "index", l.Index, "type", t.String(), "err", err)
		return err
	}
	store := f.State()
	var answer any
	err = store.Write(l.Index, func(w *state.WriteTxn) error {
		// Events are derived before the change, so they can say what it did.
		events := commandEvents(w.Snapshot(), body)
		var err error
		if answer, err = applyCommand(w, body); err != nil {
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
	if f.onApply != nil {
		f.onApply(t, body, l.Index)
	}
	return answer
}

func decodeBody(t commandType, data []byte) (any, error) {
	if t == cmdApplyPlanPart {
		cmd, err := decodePlanPart(data)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		return cmd, nil
	}
	var body any
	switch t {
	case cmdUpsertWorkload:
		body = &upsertWorkloadCmd{}
	case cmdStopWorkload:
		body = &stopWorkloadCmd{}
	case cmdUpsertNode:
		body = &upsertNodeCmd{}
	case cmdNodeStatus:
		body = &nodeStatusCmd{}
	case cmdUpsertEvals:
		body = &upsertEvalsCmd{}
	case cmdApplyPlan:
		body = &applyPlanCmd{}
	case cmdAllocClientUpdate:
		body = &allocClientUpdateCmd{}
	case cmdSetCellConfig:
		body = &setCellConfigCmd{}
	case cmdSetCellID:
		body = &setCellIDCmd{}
	case cmdMigrate:
		body = &migrateCmd{}
	case cmdNodeOp:
		body = &nodeOpCmd{}
	default:
		if body = newDeploymentBody(t); body != nil {
			break
		}
		if body = newGCBody(t); body != nil {
			break
		}
		if body = newSecurityBody(t); body == nil {
			return nil, fmt.Errorf("unknown command type %d", uint8(t))
		}
	}
	if err := json.Unmarshal(data, body); err != nil {
		return nil, fmt.Errorf("decode %s: %w", t, err)
	}
	return body, nil
}

// applyCommand is the FSM's one switch; each case is a few store calls.
// It returns the command's answer for the proposer, if it has one.
func applyCommand(w *state.WriteTxn, body any) (any, error) {
	switch c := body.(type) {
	case *upsertWorkloadCmd:
		if err := checkWorkloadIndex(w.Snapshot(), c); err != nil {
			return nil, err
		}
		if err := w.RegisterWorkload(c.Workload, c.Deployment, c.Workload.SubmitTime); err != nil {
			return nil, err
		}
		return registered{Version: c.Workload.Version}, w.UpsertEval(c.Eval)
	case *stopWorkloadCmd:
		found := w.Snapshot().Workload(c.Namespace, c.Name) != nil
		return stopped{Found: found}, applyUnanswered(w, body)
	case *migrateCmd:
		return applyMigrate(w, c)
	}
	return nil, applyUnanswered(w, body)
}

// applyUnanswered applies the commands without an answer.
func applyUnanswered(w *state.WriteTxn, body any) error {
	switch c := body.(type) {
	case *stopWorkloadCmd:
		if c.Purge {
			if err := w.DeleteWorkload(c.Namespace, c.Name); err != nil && !errors.Is(err, state.ErrNotFound) {
				return err
			}
		} else if err := w.StopWorkload(c.Namespace, c.Name); err != nil && !errors.Is(err, state.ErrNotFound) {
			return err
		} else if err := w.CancelDeployment(c.Namespace, c.Name, "workload stopped", c.Time); err != nil {
			return err
		}
		return w.UpsertEval(c.Eval)
	case *upsertNodeCmd:
		if c.Key != nil {
			if err := w.SetNodeKey(c.Key); err != nil {
				return err // the node record stays as it was
			}
		}
		if err := w.UpsertNode(c.Node); err != nil {
			return err
		}
		return upsertEvals(w, c.Evals)
	case *nodeStatusCmd:
		update := func() error { return w.UpdateNodeStatus(c.NodeID, c.Status, c.Reason) }
		if c.Status == api.NodeDown {
			update = func() error { return w.MarkNodeDown(c.NodeID, c.Reason, c.Time, c.LastHeartbeat, c.Lease) }
		}
		if err := update(); err != nil {
			return err
		}
		return upsertEvals(w, c.Evals)
	case *upsertEvalsCmd:
		return upsertEvals(w, c.Evals)
	case *applyPlanCmd:
		w.ShareGroups(c.Place)
		for _, s := range c.Stop {
			if err := w.StopAllocRequest(s); err != nil && !errors.Is(err, state.ErrNotFound) {
				return err
			}
			if err := w.CollectIfOrphan(s.AllocID); err != nil { // a purged workload's, now stopped
				return err
			}
		}
		for _, a := range c.Place {
			if err := w.UpsertAlloc(a); err != nil {
				return err
			}
		}
		if c.Eval != nil {
			if err := w.UpsertEval(c.Eval); err != nil {
				return err
			}
		}
		if c.Deployment != nil {
			if err := w.ApplyDeploymentProgress(c.Deployment, c.Time); err != nil {
				return err
			}
		}
		for _, u := range c.InPlace {
			if err := w.UpdateAllocInPlace(u); err != nil {
				return err
			}
		}
		return upsertEvals(w, c.Evals)
	case *allocClientUpdateCmd:
		for _, u := range c.Updates {
			if err := w.UpdateAllocFromClientAt(u, c.Time); err != nil {
				return err
			}
			if err := w.CollectIfOrphan(u.ID); err != nil { // a purged workload's, now done
				return err
			}
		}
		return upsertEvals(w, c.Evals)
	case *setCellConfigCmd:
		return w.SetCellConfig(c.Config)
	case *setCellIDCmd:
		return w.SetCellID(c.ID)
	case *nodeOpCmd:
		if err := applyNodeOp(w, c); err != nil {
			return err
		}
		return upsertEvals(w, c.Evals)
	}
	if handled, err := applyDeployment(w, body); handled {
		return err
	}
	if handled, err := applyGC(w, body); handled {
		return err
	}
	if handled, err := applySecurity(w, body); handled {
		return err
	}
	return fmt.Errorf("fsm: unhandled command %T", body)
}

func upsertEvals(w *state.WriteTxn, evals []*api.Evaluation) error {
	for _, e := range evals {
		if err := w.UpsertEval(e); err != nil {
			return err
		}
	}
	return nil
}

// Snapshot captures the store for raft's snapshotting.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{dump: f.State().Snapshot().Dump()}, nil
}

// Restore replaces the store with a snapshot's contents.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	s, err := decodeSnapshot(rc)
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

type fsmSnapshot struct{ dump *state.Dump }

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := encodeSnapshot(sink, s.dump); err != nil {
		sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	return sink.Close()
}

// encodeSnapshot writes the store's dump in the FSM's snapshot encoding,
// the one decodeSnapshot reads: raft's snapshots and operator snapshot
// files share it.
func encodeSnapshot(w io.Writer, d *state.Dump) error {
	return d.Encode(w)
}

// decodeSnapshot reads a snapshot into a new store; an error leaves
// nothing changed.
func decodeSnapshot(r io.Reader) (*state.Store, error) {
	var d state.Dump
	if err := json.NewDecoder(r).Decode(&d); err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", err)
	}
	return state.Restore(&d)
}

func (s *fsmSnapshot) Release() {}
