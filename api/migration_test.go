package api

import "testing"

// TestKeepsMemoryOfTask: on a node whose criu dumps root's tasks only
// (issue 18 defect 14), a move keeps the memory of a task that names root
// and of no other; elsewhere the driver decides.
func TestKeepsMemoryOfTask(t *testing.T) {
	all := &NodeCheckpoint{Available: true, Drivers: []string{"exec", "containerd"}}
	rootOnly := &NodeCheckpoint{Available: true, Drivers: []string{"exec", "containerd"}, RootOnly: true, Limit: "rlimit"}
	for _, tt := range []struct {
		name string
		ck   *NodeCheckpoint
		task Task
		st   *TaskState
		want bool
	}{
		{"any user where all dump", all, Task{User: "nobody"}, nil, true},
		{"default user where all dump", all, Task{}, nil, true},
		{"driver without memory", &NodeCheckpoint{Available: true, Drivers: []string{"exec"}}, Task{Driver: "containerd", User: "root"}, nil, false},
		{"root where root only", rootOnly, Task{User: "root"}, nil, true},
		{"uid 0 spelled 00 where root only", rootOnly, Task{User: "00"}, nil, true},
		{"default user where root only", rootOnly, Task{}, nil, false},
		{"image's user where root only, not seen yet", rootOnly, Task{Driver: "containerd"}, nil, false},
		{"image's user seen as root", rootOnly, Task{Driver: "containerd"}, &TaskState{RunsAs: "0:0"}, true},
		{"image's user seen as nobody", rootOnly, Task{Driver: "containerd"}, &TaskState{RunsAs: "65534:65534"}, false},
		{"a gid 0 task is not root for criu", rootOnly, Task{}, &TaskState{RunsAs: "65534:0"}, false},
		{"nobody where root only", rootOnly, Task{User: "65534"}, nil, false},
		{"no checkpoint", nil, Task{User: "root"}, nil, false},
	} {
		if got := tt.ck.KeepsMemoryOfTask(&tt.task, tt.st); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
