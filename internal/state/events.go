package state

import (
	"fmt"

	"github.com/strata-dev/strata/api"
)

// MaxEvents bounds the event history the store keeps.
const MaxEvents = 10000

// eventCountKey is the counters-table row that counts stored events, so the
// oldest can be dropped without scanning.
const eventCountKey = "events"

// AddEvent appends an event at the transaction's index, dropping the oldest
// past MaxEvents. seq orders events of one raft entry.
func (w *WriteTxn) AddEvent(e api.Event) error {
	e.Index = w.index
	e.ID = fmt.Sprintf("%020d-%04d", w.index, w.events)
	w.events++
	if err := w.insert(tableEvents, &e); err != nil {
		return err
	}
	count := w.eventCount() + 1
	for count > MaxEvents {
		obj, err := w.txn.First(tableEvents, "id")
		if err != nil || obj == nil {
			break
		}
		if err := w.txn.Delete(tableEvents, obj); err != nil {
			return fmt.Errorf("trim events: %w", err)
		}
		count--
	}
	return w.txn.Insert(tableCounters, &indexEntry{Table: eventCountKey, Value: count})
}

func (w *WriteTxn) eventCount() uint64 {
	obj, err := w.txn.First(tableCounters, "id", eventCountKey)
	if err != nil || obj == nil {
		return 0
	}
	return obj.(*indexEntry).Value
}

// Events returns the stored events, oldest first: with ns set, those of
// the namespace's workloads and those of no workload (nodes'); with
// workload set too, that workload's.
func (s *Snapshot) Events(ws watchSetAdder, ns, workload string) []*api.Event {
	it, err := s.txn.Get(tableEvents, "id")
	if err != nil {
		return nil
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	var out []*api.Event
	for obj := it.Next(); obj != nil; obj = it.Next() {
		e := obj.(*api.Event)
		if ns != "" && e.Workload != "" && api.NamespaceOf(e.Namespace) != ns {
			continue
		}
		if workload == "" || e.Workload == workload {
			out = append(out, e)
		}
	}
	return out
}

type watchSetAdder interface{ Add(<-chan struct{}) }
