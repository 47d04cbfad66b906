package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
)

// MaxAudit bounds the audit log the store keeps: the oldest entries go
// first.
const MaxAudit = 10000

const (
	tableAudit    = "audit"
	auditCountKey = "audit"
	// TableAudit is the audit log's table, for TableIndex.
	TableAudit = tableAudit
)

func auditTable() *memdb.TableSchema {
	return &memdb.TableSchema{Name: tableAudit, Indexes: map[string]*memdb.IndexSchema{
		"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
	}}
}

// AppendAudit appends entries at the transaction's index, dropping the
// oldest past MaxAudit.
func (w *WriteTxn) AppendAudit(entries []*api.AuditEntry) error {
	count := w.counter(auditCountKey)
	for i, e := range entries {
		c := *e
		c.Index = w.index
		c.ID = fmt.Sprintf("%020d-%05d", w.index, i)
		if err := w.insert(tableAudit, &c); err != nil {
			return err
		}
		count++
	}
	for count > MaxAudit {
		obj, err := w.txn.First(tableAudit, "id")
		if err != nil || obj == nil {
			break
		}
		if err := w.txn.Delete(tableAudit, obj); err != nil {
			return fmt.Errorf("trim audit log: %w", err)
		}
		count--
	}
	return w.txn.Insert(tableCounters, &indexEntry{Table: auditCountKey, Value: count})
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
	for _, e := range d.Audit {
		if err := txn.Insert(tableAudit, e); err != nil {
			return fmt.Errorf("restore %s: %w", tableAudit, err)
		}
	}
	return txn.Insert(tableCounters, &indexEntry{Table: auditCountKey, Value: uint64(len(d.Audit))})
}
