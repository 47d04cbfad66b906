package spec

import (
	"reflect"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

func mustParse(t *testing.T, yaml string) *api.Workload {
	t.Helper()
	w, err := Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return w
}

func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func TestDefaults(t *testing.T) {
	w := mustParse(t, oneTask(cmd))
	want := &api.Workload{
		Name:          "w",
		PriorityClass: api.PriorityBatch,
		Priority:      500,
		Groups: []*api.TaskGroup{{
			Name:     "g",
			Replicas: 1,
			RestartPolicy: api.RestartPolicy{
				Mode: api.RestartOnFailure, Attempts: 3, Delay: time.Second, MaxDelay: 30 * time.Second,
			},
			Reschedule: &api.ReschedulePolicy{Attempts: 3, Interval: time.Hour, Delay: 5 * time.Second,
				DelayFunction: api.DelayExponential, MaxDelay: 5 * time.Minute},
			Disconnect: &api.DisconnectPolicy{Replace: true, Reconcile: api.KeepReplacement},
			Tasks: []*api.Task{{
				Name:        "t",
				Driver:      DriverExec,
				Command:     []string{"/bin/true"},
				Resources:   api.Resources{CPUMilli: 100, MemoryBytes: 64 << 20},
				KillTimeout: 5 * time.Second,
				PidsLimit:   1024,
			}},
		}},
	}
	equal(t, "defaulted workload", w, want)
}

func TestExplicitFields(t *testing.T) {
	w := mustParse(t, `apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: full
  labels: {team: infra, "strata.dev/owner": ana, empty: ""}
spec:
  priorityClass: production
  priority: 1200
  schedulingPolicy: spread
  groups:
    - name: web
      replicas: 0
      restartPolicy: {mode: always, delay: 500ms}
      placement:
        require: [{key: rack, op: in, values: [r1, r2]}, "gpu", "row=3"]
        prefer: [{key: zone, values: [z1], weight: 80}]
        avoid: ["powerZone!=A", {key: powerZone, values: [B], weight: 80, window: peak-hours}]
      tasks:
        - name: server
          driver: mock
          env: {K: V, PORT: 8080, DEBUG: true, EMPTY: }
          workDir: /srv
          resources: {cpu: 2, memory: 1.5Gi, disk: 100Mi, gpu: 2, gpuModels: [A100], bandwidth: 10Gbps, exclusiveCores: true}
          killTimeout: 1m30s
          pidsLimit: 256
`)
	equal(t, "labels", w.Labels, map[string]string{"team": "infra", "strata.dev/owner": "ana", "empty": ""})
	equal(t, "priority", []any{w.PriorityClass, w.Priority}, []any{"production", 1200})
	equal(t, "policy", w.SchedulingPolicy, api.SchedulingPolicy{Type: api.PolicySpread})
	g := w.Groups[0]
	equal(t, "replicas", g.Replicas, 0)
	// always without attempts restarts without limit; maxDelay keeps its default.
	equal(t, "restart", g.RestartPolicy, api.RestartPolicy{Mode: "always", Attempts: 0, Delay: 500 * time.Millisecond, MaxDelay: 30 * time.Second})
	equal(t, "placement", g.Placement, api.Placement{
		Require: []api.LabelRule{
			{Key: "rack", Op: "in", Values: []string{"r1", "r2"}},
			{Key: "gpu", Op: "exists"},
			{Key: "row", Op: "=", Values: []string{"3"}},
		},
		Prefer: []api.LabelRule{{Key: "zone", Op: "in", Values: []string{"z1"}, Weight: 80}},
		Avoid: []api.LabelRule{
			{Key: "powerZone", Op: "!=", Values: []string{"A"}, Weight: 50},
			{Key: "powerZone", Op: "in", Values: []string{"B"}, Weight: 80, Window: "peak-hours"},
		},
	})
	equal(t, "task", g.Tasks[0], &api.Task{
		Name:           "server",
		Driver:         DriverMock,
		Env:            map[string]string{"K": "V", "PORT": "8080", "DEBUG": "true", "EMPTY": ""},
		WorkDir:        "/srv",
		Resources:      api.Resources{CPUMilli: 2000, MemoryBytes: 3 << 29, DiskBytes: 100 << 20, GPUs: 2, NetMbps: 10000},
		GPUModels:      []string{"A100"},
		ExclusiveCores: true,
		KillTimeout:    90 * time.Second,
		PidsLimit:      256,
	})
	equal(t, "notices", w.Unenforced, []api.Notice(nil))
}

func TestRestartPolicyDefaults(t *testing.T) {
	tests := []struct {
		policy string
		want   api.RestartPolicy
	}{
		{"{mode: never}", api.RestartPolicy{Mode: "never", Delay: time.Second, MaxDelay: 30 * time.Second}},
		{"{mode: always, attempts: 5}", api.RestartPolicy{Mode: "always", Attempts: 5, Delay: time.Second, MaxDelay: 30 * time.Second}},
		{"{attempts: 0}", api.RestartPolicy{Mode: "on-failure", Attempts: 0, Delay: time.Second, MaxDelay: 30 * time.Second}},
		// A delay above the default cap raises the cap rather than failing.
		{"{delay: 1m}", api.RestartPolicy{Mode: "on-failure", Attempts: 3, Delay: time.Minute, MaxDelay: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			w := mustParse(t, oneTask(cmd)+"      restartPolicy: "+tt.policy+"\n")
			equal(t, "restart policy", w.Groups[0].RestartPolicy, tt.want)
		})
	}
}

func TestGPUShare(t *testing.T) {
	w := mustParse(t, oneTask(cmd+"          resources: {gpu: 0.5, gpuModels: [A100]}\n"))
	r := w.Groups[0].Tasks[0].Resources
	if r.GPUs != 0 || r.GPUMilli != 500 {
		t.Errorf("gpu 0.5 = GPUs %d, GPUMilli %d; want 0, 500", r.GPUs, r.GPUMilli)
	}
}

func TestJSONInput(t *testing.T) {
	w := mustParse(t, `{"apiVersion": "strata.dev/v1", "kind": "Workload", "metadata": {"name": "j"},
	 "spec": {"groups": [{"name": "g", "replicas": 2, "tasks": [{"name": "t", "command": ["/bin/true"], "resources": {"memory": "1Gi"}}]}]}}`)
	if g := w.Groups[0]; g.Replicas != 2 || g.Tasks[0].Resources.MemoryBytes != 1<<30 {
		t.Errorf("JSON document parsed as %+v", g)
	}
}

func TestPriorityFor(t *testing.T) {
	for class, want := range map[string]int{"production": 1000, "batch": 500, "best-effort": 100, "": 500, "urgent": 0} {
		if got := PriorityFor(class); got != want {
			t.Errorf("PriorityFor(%q) = %d, want %d", class, got, want)
		}
	}
	// Bands must not overlap, or a lower class could outrank a higher one.
	pl, _, _ := PriorityRange("production")
	_, bh, _ := PriorityRange("batch")
	bl, _, _ := PriorityRange("batch")
	_, eh, _ := PriorityRange("best-effort")
	if !(eh < bl && bh < pl) {
		t.Errorf("priority bands overlap")
	}
	w := mustParse(t, doc("  priorityClass: best-effort\n  priority: 7\n  groups: [{name: g, tasks: [{name: t, command: [x]}]}]\n"))
	if w.Priority != 7 {
		t.Errorf("refined best-effort priority = %d, want 7", w.Priority)
	}
}

func TestGang(t *testing.T) {
	tests := []struct {
		gang string
		want api.GangPolicy
	}{
		{"{minMember: 4, timeout: 5m, topology: rack}", api.GangPolicy{MinMember: 4, Timeout: 5 * time.Minute, Topology: "rack"}},
		{"{}", api.GangPolicy{MinMember: 6}}, // every replica
		{"{topology: powerZone}", api.GangPolicy{MinMember: 6, Topology: "powerZone"}},
		{"{minMember: 6, timeout: 0s}", api.GangPolicy{MinMember: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.gang, func(t *testing.T) {
			w := mustParse(t, oneTask(cmd)+"      replicas: 6\n      gang: "+tt.gang+"\n")
			if w.Groups[0].Gang == nil {
				t.Fatal("gang not parsed")
			}
			equal(t, "gang", *w.Groups[0].Gang, tt.want)
		})
	}
	if g := mustParse(t, oneTask(cmd)).Groups[0].Gang; g != nil {
		t.Errorf("a group without gang got %+v", g)
	}
	if g := mustParse(t, oneTask(cmd)+"      gang:\n").Groups[0].Gang; g != nil {
		t.Errorf("gang: null got %+v", g)
	}
}
