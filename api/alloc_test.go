package api

import "testing"

// A null task state in an agent report once reached the store, and the
// next report for the allocation panicked in the FSM, again on every
// replay of the log. The API refuses it now; Copy must survive one
// stored before.
func TestAllocationCopySkipsNilTaskStates(t *testing.T) {
	a := &Allocation{TaskStates: map[string]*TaskState{"t": nil, "u": {State: TaskRunning}}}
	c := a.Copy()
	if len(c.TaskStates) != 1 || c.TaskStates["u"].State != TaskRunning {
		t.Fatalf("copy %+v", c.TaskStates)
	}
}
