package state

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

func TestRoundTripAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := &AllocRecord{
		Alloc:        &api.Allocation{ID: "a1", DesiredStatus: api.DesiredRun},
		ClientStatus: api.AllocRunning,
		Tasks: map[string]*TaskRecord{"web": {
			State:  api.TaskState{State: api.TaskRunning, PID: 42, Restarts: 2},
			Handle: &drivers.TaskHandle{ID: "a1/web", ShimPID: 41, ShimStart: 1234, PID: 42},
		}},
	}
	if err := db.PutAlloc(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
	db.Close()

	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Allocs()
	if err != nil || len(got) != 1 {
		t.Fatalf("Allocs = %v, %v", got, err)
	}
	task := got[0].Tasks["web"]
	if got[0].Alloc.ID != "a1" || task.State.PID != 42 || task.State.Restarts != 2 || task.Handle.ShimStart != 1234 {
		t.Errorf("round trip lost data: %+v %+v", got[0], task)
	}
	if err := db.DeleteAlloc("a1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Allocs(); len(got) != 0 {
		t.Errorf("after delete: %v", got)
	}
}
