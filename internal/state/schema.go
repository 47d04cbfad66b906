package state

import (
	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
)

// Table names.
const (
	tableWorkloads = "workloads"
	tableNodes     = "nodes"
	tableAllocs    = "allocs"
	tableEvals     = "evals"
	tableEvents    = "events"
	tableConfig    = "config"
	tableIndex     = "index"
	// tableCounters holds bookkeeping numbers that are not raft indexes
	// (kept apart so Snapshot.Index, the max of tableIndex, stays an index).
	tableCounters = "counters"
)

// indexEntry records the raft index that last modified a table.
type indexEntry struct {
	Table string
	Value uint64
}

func schema() *memdb.DBSchema {
	db := &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		tableWorkloads: {Name: tableWorkloads, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
		}},
		tableNodes: {Name: tableNodes, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		}},
		tableAllocs: {Name: tableAllocs, Indexes: map[string]*memdb.IndexSchema{
			"id":       {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			"node":     {Name: "node", Indexer: &memdb.StringFieldIndex{Field: "NodeID"}},
			"workload": {Name: "workload", Indexer: &memdb.StringFieldIndex{Field: "Workload"}},
		}},
		tableEvals: {Name: tableEvals, Indexes: map[string]*memdb.IndexSchema{
			"id":       {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			"workload": {Name: "workload", Indexer: &memdb.StringFieldIndex{Field: "Workload"}},
		}},
		tableEvents: {Name: tableEvents, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		}},
		tableConfig: {Name: tableConfig, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		}},
		tableCounters: {Name: tableCounters, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Table"}},
		}},
		tableIndex: {Name: tableIndex, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Table"}},
		}},
	}}
	for name, t := range securityTables() {
		db.Tables[name] = t
	}
	return db
}

// configRow is a row of tableConfig: the cell configuration (ID
// cellConfigID) or the cell's identity (ID cellIdentityID, CellID set).
type configRow struct {
	ID     string
	Config *api.CellConfig
	CellID string
}

const (
	cellConfigID   = "cell"
	cellIdentityID = "identity"
)
