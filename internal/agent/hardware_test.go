package agent

import (
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/fingerprint"
)

func TestHardwareFacts(t *testing.T) {
	a := &Agent{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	n := &api.Node{Labels: map[string]string{}, Capacity: api.Resources{MemoryBytes: 8 << 30}}
	a.hardwareFacts(n, &fingerprint.Result{
		HugePages: api.Resources{HugePages2Mi: 512 << 20, HugePages1Gi: 1 << 30},
		CPUArch:   "arm64", CPUFeatures: []string{"sve", "sve2"},
	})
	want := api.Resources{MemoryBytes: 8<<30 - 512<<20 - 1<<30, HugePages2Mi: 512 << 20, HugePages1Gi: 1 << 30}
	if n.Capacity != want {
		t.Errorf("capacity = %+v, want %+v (pools out of memory)", n.Capacity, want)
	}
	for k, v := range map[string]string{"cpu.arch": "arm64", "cpu.feature.sve": "true", "cpu.feature.sve2": "true"} {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
}

func TestTaskMems(t *testing.T) {
	cxl := []api.NUMANode{
		{ID: 0, CPUs: []int{0, 1}, MemoryBytes: 8 << 30},
		{ID: 1, CPUs: []int{2, 3}, MemoryBytes: 8 << 30},
		{ID: 2, MemoryBytes: 64 << 30, Tier: api.MemoryTierSlow},
	}
	unpinned := api.Assignment{NUMANode: -1}
	pinned := api.Assignment{CPUs: []int{2}, NUMANode: 1}
	for _, tc := range []struct {
		name    string
		numa    []api.NUMANode
		asg     api.Assignment
		tiers   []string
		want    []int
		wantErr string
	}{
		{"no NUMA detail", nil, unpinned, nil, nil, ""},
		{"default is standard memory only", cxl, unpinned, nil, []int{0, 1}, ""},
		{"accepts slow too", cxl, unpinned, []string{"standard", "slow"}, []int{0, 1, 2}, ""},
		{"slow only", cxl, unpinned, []string{"slow"}, []int{2}, ""},
		{"pinned keeps its node", cxl, pinned, nil, []int{1}, ""},
		{"pinned and slow", cxl, pinned, []string{"standard", "slow"}, []int{1, 2}, ""},
		{"slow on a node without it", cxl[:2], unpinned, []string{"slow"}, nil, "no NUMA node of memory tier slow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := taskMems(tc.numa, tc.asg, &api.Task{MemoryTiers: tc.tiers})
			if tc.wantErr != "" {
				if !errors.Is(err, drivers.ErrWrongNode) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("taskMems = %v, %v; want ErrWrongNode %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("taskMems = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestExecTaskGetsMemsAndHugePages runs a real task asking for one 2Mi
// page and standard memory: its cpuset.mems is node 0 (the real cpuset
// controller) and its hugetlb limit one page. A task asking for the slow
// tier on this node, which has none, fails at once without restarts.
func TestExecTaskGetsMemsAndHugePages(t *testing.T) {
	needCgroups(t)
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	if len(ag.Node().NUMA) != 1 || ag.Node().NUMA[0].ID != 0 {
		t.Skip("needs a host with one NUMA node, 0")
	}
	v, _ := cgroup.Detect(cgroup.DefaultRoot)
	alloc := newAlloc(ag.NodeID()).task("db", api.Resources{CPUMilli: 100, MemoryBytes: 32 << 20, HugePages2Mi: 2 << 20}, "sleep", "300").
		last(func(tk *api.Task) { tk.MemoryTiers = []string{api.MemoryTierStandard} }).build()
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "db", "task running", running)
	rel := filepath.Join(ag.cfg.CgroupParent, alloc.ID, "db")
	mems := filepath.Join(cgroup.DefaultRoot, rel, "cpuset.mems")
	if v == cgroup.V1 {
		mems = filepath.Join(cgroup.DefaultRoot, "cpuset", rel, "cpuset.mems")
	}
	if got := readTrim(t, mems); got != "0" {
		t.Errorf("cpuset.mems = %q, want 0", got)
	}
	switch how := cgroup.HugetlbEnforced(v, cgroup.DefaultRoot); how {
	case "cgroup2 hugetlb (hybrid)":
		dir := filepath.Join(cgroup.DefaultRoot, "unified", rel)
		if got := readTrim(t, filepath.Join(dir, "hugetlb.2MB.max")); got != strconv.Itoa(2<<20) {
			t.Errorf("hugetlb.2MB.max = %q, want one page", got)
		}
		if procs := readTrim(t, filepath.Join(dir, "cgroup.procs")); !strings.Contains(procs, strconv.Itoa(up.TaskStates["db"].PID)) {
			t.Errorf("task pid %d not in %s: %q", up.TaskStates["db"].PID, dir, procs)
		}
	case "":
		t.Log("no hugetlb controller: limit not checked")
	default:
		t.Logf("hugetlb by %s: checked in internal/agent/cgroup", how)
	}

	slow := newAlloc(ag.NodeID()).task("cache", api.Resources{CPUMilli: 100, MemoryBytes: 32 << 20}, "sleep", "300").
		last(func(tk *api.Task) { tk.MemoryTiers = []string{api.MemoryTierSlow} }).build()
	srv.put(slow)
	st := waitTask(t, srv, slow.ID, "cache", "slow-tier task failed", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.State == api.TaskDead
	}).TaskStates["cache"]
	if !st.Failed || st.Restarts != 0 || !strings.Contains(st.Message, "no NUMA node of memory tier slow") {
		t.Errorf("slow-tier task = %+v, want failed at once (no restarts) saying there is no slow tier", st)
	}
}
