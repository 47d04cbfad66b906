package state

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"
)

// Store is the MVCC state store. It is safe for concurrent use: writes are
// serialized by memdb, reads use immutable snapshots.
type Store struct {
	db *memdb.MemDB
}

// New returns an empty store.
func New() *Store {
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		panic(fmt.Sprintf("state: invalid schema: %v", err)) // a programming error, caught by every test
	}
	return &Store{db: db}
}

// Snapshot returns an immutable view of the current state.
func (s *Store) Snapshot() *Snapshot {
	return &Snapshot{txn: s.db.Txn(false), store: s}
}

// Index returns the highest raft index applied to the store.
func (s *Store) Index() uint64 { return s.Snapshot().Index() }

// Query runs a read function against a fresh snapshot and, when minIndex is
// not yet passed, blocks until the data the function watched changes, the
// wait elapses or ctx is done. The function returns the index of the data it
// read; Query returns when that index exceeds minIndex. This is the server
// half of a blocking query (`?index=N&wait=30s`).
func (s *Store) Query(ctx context.Context, minIndex uint64, wait time.Duration, fn func(snap *Snapshot, ws memdb.WatchSet) (uint64, error)) (uint64, error) {
	blocking := minIndex > 0 && wait > 0
	wctx := ctx
	if blocking {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	for {
		ws := memdb.NewWatchSet()
		snap := s.Snapshot()
		// Any table write bumps the index table; watching it lets callers
		// wake on writes that their own watches did not cover.
		idx, err := fn(snap, ws)
		if err != nil {
			return 0, err
		}
		if !blocking || idx > minIndex {
			return idx, nil
		}
		if werr := ws.WatchCtx(wctx); werr != nil {
			// Timed out or cancelled: answer with what we have.
			if ctx.Err() != nil {
				return idx, ctx.Err()
			}
			return idx, nil
		}
	}
}

func setIndex(txn *memdb.Txn, table string, index uint64) error {
	return txn.Insert(tableIndex, &indexEntry{Table: table, Value: index})
}
