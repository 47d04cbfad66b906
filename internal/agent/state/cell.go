package state

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

var (
	metaBucket = []byte("meta")
	cellKey    = []byte("cell")
)

// CellMemory is what the agent remembers of its cell: the identity it
// belongs to and the highest server index it has acted on. The agent
// refuses desired state from another cell or from a server behind Index.
type CellMemory struct {
	CellID string `json:"cellId"`
	Index  uint64 `json:"index"`
}

// Cell returns the remembered cell; the zero value when none is.
func (db *DB) Cell() (CellMemory, error) {
	var m CellMemory
	err := db.bolt.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(metaBucket)
		if b == nil {
			return nil
		}
		v := b.Get(cellKey)
		if v == nil {
			return nil
		}
		return json.Unmarshal(v, &m)
	})
	if err != nil {
		return CellMemory{}, fmt.Errorf("read cell memory: %w", err)
	}
	return m, nil
}

// PutCell stores the remembered cell.
func (db *DB) PutCell(m CellMemory) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := db.bolt.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		return b.Put(cellKey, data)
	}); err != nil {
		return fmt.Errorf("store cell memory: %w", err)
	}
	return nil
}
