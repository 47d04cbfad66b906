// Package state is the agent's local database (bbolt, DataDir/agent.db): the
// allocations the agent runs and, per task, its driver handle and last
// reported state, so that a restarted agent re-attaches to running tasks
// instead of starting them again.
//
// It stores what it is given and never decides anything; it must never be
// opened by two agent processes at once (bbolt's file lock enforces that).
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

var allocBucket = []byte("allocs")

// ErrLocked is returned by Open when another process holds the database.
var ErrLocked = errors.New("agent state database is locked by another process")

// AllocRecord is everything persisted about one allocation.
type AllocRecord struct {
	Alloc        *api.Allocation        `json:"alloc"`
	ClientStatus string                 `json:"clientStatus"`
	ClientReason string                 `json:"clientReason,omitempty"`
	Tasks        map[string]*TaskRecord `json:"tasks"`
}

// TaskRecord is one task's persisted state. Handle is nil while the task is
// not running (not started yet, waiting to restart, or dead).
type TaskRecord struct {
	State  api.TaskState       `json:"state"`
	Handle *drivers.TaskHandle `json:"handle,omitempty"`
}

// DB is the agent's state database. It is safe for concurrent use.
type DB struct {
	bolt *bolt.DB
}

// Open opens (creating) the database at path.
func Open(path string) (*DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(allocBucket)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("init %s: %w", path, err)
	}
	return &DB{bolt: db}, nil
}

// Close closes the database.
func (db *DB) Close() error { return db.bolt.Close() }

// PutAlloc stores rec under its allocation id.
func (db *DB) PutAlloc(rec *AllocRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode alloc %s: %w", rec.Alloc.ID, err)
	}
	if err := db.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(allocBucket).Put([]byte(rec.Alloc.ID), data)
	}); err != nil {
		return fmt.Errorf("put alloc %s: %w", rec.Alloc.ID, err)
	}
	return nil
}

// DeleteAlloc removes an allocation; deleting an unknown id is no error.
func (db *DB) DeleteAlloc(id string) error {
	if err := db.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(allocBucket).Delete([]byte(id))
	}); err != nil {
		return fmt.Errorf("delete alloc %s: %w", id, err)
	}
	return nil
}

// Allocs returns every stored allocation.
func (db *DB) Allocs() ([]*AllocRecord, error) {
	var out []*AllocRecord
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(allocBucket).ForEach(func(k, v []byte) error {
			rec := &AllocRecord{}
			if err := json.Unmarshal(v, rec); err != nil {
				return fmt.Errorf("decode alloc %s: %w", k, err)
			}
			out = append(out, rec)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list allocs: %w", err)
	}
	return out, nil
}
