package state

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-memdb"
)

// The security state of a cell: node keys (who may speak for a node) and
// cell secrets (the join token). Neither is served by any read of the
// API; both travel through raft and snapshots like the rest of the state.

const (
	tableNodeKeys    = "nodeKeys"
	tableCellSecrets = "cellSecrets"
)

// ErrNodeIDTaken refuses a node key for a node id that already has another
// one: a node id cannot be taken over.
var ErrNodeIDTaken = errors.New("node id is registered by another agent")

// NodeKey is the verifier of the secret a node's agent registered with
// (nodeauth.Verifier); the secret itself is never stored.
type NodeKey struct {
	NodeID      string `json:"nodeId"`
	Verifier    string `json:"verifier"`
	CreateIndex uint64 `json:"createIndex"`
	ModifyIndex uint64 `json:"modifyIndex"`
}

// CellSecret is a named secret of the cell, such as its join token.
type CellSecret struct {
	Name        string `json:"name"`
	Value       string `json:"value"`
	ModifyIndex uint64 `json:"modifyIndex"`
}

// CellSecretJoinToken names the cell's join token.
const CellSecretJoinToken = "join-token"

func securityTables() map[string]*memdb.TableSchema {
	tables := aclTables()
	for name, t := range map[string]*memdb.TableSchema{
		tableNodeKeys: {Name: tableNodeKeys, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "NodeID"}},
		}},
		tableCellSecrets: {Name: tableCellSecrets, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
		}},
	} {
		tables[name] = t
	}
	return tables
}

// NodeKey returns the key of a node, nil if it has none.
func (s *Snapshot) NodeKey(nodeID string) *NodeKey {
	obj, err := s.txn.First(tableNodeKeys, "id", nodeID)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*NodeKey)
}

// CellSecret returns a cell secret's value, "" if it is not set.
func (s *Snapshot) CellSecret(name string) string {
	obj, err := s.txn.First(tableCellSecrets, "id", name)
	if err != nil || obj == nil {
		return ""
	}
	return obj.(*CellSecret).Value
}

// SetNodeKey gives a node its key. A node that has a different key keeps
// it: the write fails with ErrNodeIDTaken (the proposer checked, but two
// first registrations of one id may race; the log decides which won).
func (w *WriteTxn) SetNodeKey(k *NodeKey) error {
	old := w.Snapshot().NodeKey(k.NodeID)
	if old != nil && old.Verifier != k.Verifier {
		return fmt.Errorf("node %q: %w", k.NodeID, ErrNodeIDTaken)
	}
	if old != nil {
		return nil
	}
	c := *k
	c.CreateIndex, c.ModifyIndex = w.index, w.index
	return w.insert(tableNodeKeys, &c)
}

// SetCellSecret sets a cell secret.
func (w *WriteTxn) SetCellSecret(name, value string) error {
	return w.insert(tableCellSecrets, &CellSecret{Name: name, Value: value, ModifyIndex: w.index})
}

func (s *Snapshot) nodeKeys() []*NodeKey {
	var out []*NodeKey
	it, err := s.txn.Get(tableNodeKeys, "id")
	if err != nil {
		return nil
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*NodeKey))
	}
	return out
}

func (s *Snapshot) cellSecrets() []*CellSecret {
	var out []*CellSecret
	it, err := s.txn.Get(tableCellSecrets, "id")
	if err != nil {
		return nil
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*CellSecret))
	}
	return out
}

// dumpSecurity adds the security rows to a dump.
func (s *Snapshot) dumpSecurity(d *Dump) {
	d.NodeKeys, d.CellSecrets = s.nodeKeys(), s.cellSecrets()
	s.dumpACL(d)
}

// restoreSecurity inserts a dump's security rows.
func restoreSecurity(txn *memdb.Txn, d *Dump) error {
	if err := restoreACL(txn, d); err != nil {
		return err
	}
	for _, k := range d.NodeKeys {
		if err := txn.Insert(tableNodeKeys, k); err != nil {
			return fmt.Errorf("restore %s: %w", tableNodeKeys, err)
		}
	}
	for _, c := range d.CellSecrets {
		if err := txn.Insert(tableCellSecrets, c); err != nil {
			return fmt.Errorf("restore %s: %w", tableCellSecrets, err)
		}
	}
	return nil
}
