package state

import (
	"path/filepath"
	"testing"
)

func TestCellMemorySurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := db.Cell(); err != nil || m != (CellMemory{}) {
		t.Fatalf("new database remembers %+v (err %v), want nothing", m, err)
	}
	want := CellMemory{CellID: "c1", Index: 4711}
	if err := db.PutCell(want); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if m, err := db.Cell(); err != nil || m != want {
		t.Fatalf("after reopen: %+v (err %v), want %+v", m, err, want)
	}
}
