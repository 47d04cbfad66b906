package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
)

// MaxAudit bounds the audit log the store keeps: the oldest entries go
// first. Unproven refusals (api.AuditEntry.Unproven) have their own
// bound, MaxAuditUnproven, and never push the rest out.
const (
	MaxAudit         = 10000
	MaxAuditUnproven = 1000
)

const (
	tableAudit            = "audit"
	auditCountKey         = "audit"
	auditUnprovenCountKey = "audit-unproven"
	// TableAudit is the audit log's table, for TableIndex.
	TableAudit = tableAudit
)

func auditTable() *memdb.TableSchema {
	return &memdb.TableSchema{Name: tableAudit, Indexes: map[string]*memdb.IndexSchema{
		"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		// Each class of entries in log order: the oldest of a class is
		// the first of its prefix.
		"class": {Name: "class", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
			&memdb.BoolFieldIndex{Field: "Unproven"}, &memdb.StringFieldIndex{Field: "ID"}}}},
	}}
}

// auditBound is a class of audit entries: its counter and its bound.
type auditBound struct {
	key      string
	unproven bool
	max      uint64
}

var auditBounds = [2]auditBound{{auditCountKey, false, MaxAudit}, {auditUnprovenCountKey, true, MaxAuditUnproven}}

func boundOf(e *api.AuditEntry) auditBound {
	if e.Unproven {
		return auditBounds[1]
	}
	return auditBounds[0]
}

// AppendAudit appends entries at the transaction's index, dropping the
// oldest of each class past its bound: unproven refusals only ever push
// out older unproven refusals.
func (w *WriteTxn) AppendAudit(entries []*api.AuditEntry) error {
	var added [2]uint64
	for i, e := range entries {
		c := *e
		c.Index = w.index
		c.ID = fmt.Sprintf("%020d-%05d", w.index, i)
		if err := w.insert(tableAudit, &c); err != nil {
			return err
		}
		if c.Unproven {
			added[1]++
		} else {
			added[0]++
		}
	}
	for i, b := range auditBounds {
		if added[i] == 0 {
			continue
		}
		count := w.counter(b.key) + added[i]
		for ; count > b.max; count-- {
			obj, err := w.txn.First(tableAudit, "class_prefix", b.unproven, "")
			if err != nil || obj == nil {
				break
			}
			if err := w.txn.Delete(tableAudit, obj); err != nil {
				return fmt.Errorf("trim audit log: %w", err)
			}
		}
		if err := w.txn.Insert(tableCounters, &indexEntry{Table: b.key, Value: count}); err != nil {
			return err
		}
	}
	return nil
}

func (w *WriteTxn) counter(key string) uint64 {
	obj, err := w.txn.First(tableCounters, "id", key)
	if err != nil || obj == nil {
		return 0
	}
	return obj.(*indexEntry).Value
}

// Audit returns the audit log, oldest first.
func (s *Snapshot) Audit(ws watchSetAdder) []*api.AuditEntry {
	it, err := s.txn.Get(tableAudit, "id")
	if err != nil {
		return nil
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	var out []*api.AuditEntry
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*api.AuditEntry))
	}
	return out
}

func restoreAudit(txn *memdb.Txn, d *Dump) error {
	counts := map[string]uint64{}
	for _, e := range d.Audit {
		if err := txn.Insert(tableAudit, e); err != nil {
			return fmt.Errorf("restore %s: %w", tableAudit, err)
		}
		counts[boundOf(e).key]++
	}
	for _, b := range auditBounds {
		if err := txn.Insert(tableCounters, &indexEntry{Table: b.key, Value: counts[b.key]}); err != nil {
			return err
		}
	}
	return nil
}
