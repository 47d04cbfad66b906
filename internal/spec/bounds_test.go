package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// twoTasks is a group "g" of two exec tasks, each with the given resources.
func twoTasks(res string) string {
	return doc(`  groups:
    - name: g
      tasks:
        - {name: a, command: [/bin/true], resources: ` + res + `}
        - {name: b, command: [/bin/true], resources: ` + res + `}
`)
}

// Issue 7, defect 3: quantities that fit an int64 one by one but whose sum
// does not were accepted, and the group asked for -2 millicores. Every
// quantity is bounded, and so is a group's total.
func TestQuantitiesAreBounded(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		paths []string
		msg   string
	}{
		{"the issue's two tasks", twoTasks("{cpu: 9223372036854775807m, memory: 9223372036854775807B}"), []string{
			"spec.groups[0].tasks[0].resources.cpu", "spec.groups[0].tasks[0].resources.memory",
			"spec.groups[0].tasks[1].resources.cpu", "spec.groups[0].tasks[1].resources.memory",
		}, "at most"},
		{"cpu above the maximum", oneTask(cmd + "          resources: {cpu: 1000001000m}\n"), []string{"spec.groups[0].tasks[0].resources.cpu"}, "at most 1000000"},
		{"memory above the maximum", oneTask(cmd + "          resources: {memory: 2Pi}\n"), []string{"spec.groups[0].tasks[0].resources.memory"}, "at most"},
		{"disk above the maximum", oneTask(cmd + "          resources: {disk: 9Pi}\n"), []string{"spec.groups[0].tasks[0].resources.disk"}, "at most 8PiB"},
		{"gpus above the maximum", oneTask(cmd + "          resources: {gpu: 4097}\n"), []string{"spec.groups[0].tasks[0].resources.gpu"}, "at most 4096"},
		{"bandwidth above the maximum", oneTask(cmd + "          resources: {bandwidth: 1000001Gbps}\n"), []string{"spec.groups[0].tasks[0].resources.bandwidth"}, "at most"},
		{"tasks together above a node's maximum", twoTasks("{cpu: 600000000m}"), []string{"spec.groups[0].tasks"}, "together"},
		{"minBandwidthGbps above the maximum", doc("  containers: [{name: c, command: [x]}]\n  placementConstraints: {minBandwidthGbps: 2000000}\n"),
			[]string{"spec.placementConstraints.minBandwidthGbps"}, "at most"},
		{"pidsLimit above the kernel's", oneTask(cmd + "          pidsLimit: 9223372036854775807\n"), []string{"spec.groups[0].tasks[0].pidsLimit"}, "at most"},
		{"replicas of all groups together", doc(`  groups:
    - {name: a, replicas: 600000, tasks: [{name: t, command: [x]}]}
    - {name: b, replicas: 600000, tasks: [{name: t, command: [x]}]}
`), []string{"spec.groups"}, "together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErrors(t, tt.yaml, tt.paths, tt.msg) })
	}
}

// Issue 7, defect 10: a killTimeout of 2562047h (the largest time.Duration)
// was accepted; every duration is bounded.
func TestDurationsAreBounded(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		paths []string
		msg   string
	}{
		{"the issue's killTimeout", oneTask(cmd + "          killTimeout: 2562047h\n"), []string{"spec.groups[0].tasks[0].killTimeout"}, "at most 1h"},
		{"killTimeout just above an hour", oneTask(cmd + "          killTimeout: 1h0m1s\n"), []string{"spec.groups[0].tasks[0].killTimeout"}, "at most 1h"},
		{"restart delay", doc("  groups:\n    - {name: g, restartPolicy: {delay: 2562047h}, tasks: [{name: t, command: [x]}]}\n"),
			[]string{"spec.groups[0].restartPolicy.delay"}, "at most 168h"},
		{"gang timeout", doc("  groups:\n    - {name: g, gang: {timeout: 169h}, tasks: [{name: t, command: [x]}]}\n"),
			[]string{"spec.groups[0].gang.timeout"}, "at most 168h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErrors(t, tt.yaml, tt.paths, tt.msg) })
	}
	w := mustParse(t, oneTask(cmd+"          killTimeout: 1h\n"))
	if got := w.Groups[0].Tasks[0].KillTimeout.String(); got != "1h0m0s" {
		t.Fatalf("killTimeout at the maximum: %s", got)
	}
}

// Issue 7, defect 10: NUL bytes in command and env were accepted; exec
// cannot pass them, and no string of a workload may hold one.
func TestNULBytesAreRejected(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		paths []string
	}{
		{"command", oneTask(`          command: ["/bin/echo", "a\0b"]` + "\n"), []string{"spec.groups[0].tasks[0].command[1]"}},
		{"program", oneTask(`          command: ["/bin/ech\0o"]` + "\n"), []string{"spec.groups[0].tasks[0].command[0]"}},
		{"env value", oneTask(cmd + `          env: {A: "x\0y"}` + "\n"), []string{"spec.groups[0].tasks[0].env.A"}},
		{"env value in JSON", `{"apiVersion": "strata.dev/v1", "kind": "Workload", "metadata": {"name": "w"}, "spec": {"groups": [{"name": "g", "tasks": [{"name": "t", "command": ["x"], "env": {"A": "\u0000"}}]}]}}`,
			[]string{"spec.groups[0].tasks[0].env.A"}},
		{"workDir", oneTask(cmd + `          workDir: "/srv\0"` + "\n"), []string{"spec.groups[0].tasks[0].workDir"}},
		{"image", oneTask(cmd + `          image: "busybox\0"` + "\n"), []string{"spec.groups[0].tasks[0].image"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErrors(t, tt.yaml, tt.paths, "NUL") })
	}
}

// TestBoundsAreInclusive: the documented maxima themselves are accepted.
func TestBoundsAreInclusive(t *testing.T) {
	w := mustParse(t, oneTask(cmd+"          resources: {cpu: 1000000000m, memory: 1Pi, disk: 8Pi, gpu: 4096, bandwidth: 1000000Gbps}\n          pidsLimit: 4194304\n"))
	r := w.Groups[0].Tasks[0].Resources
	if r.CPUMilli != 1_000_000_000 || r.MemoryBytes != 1<<50 || r.DiskBytes != 1<<53 || r.GPUs != 4096 || r.NetMbps != 1_000_000_000 {
		t.Fatalf("resources at the maxima: %+v", r)
	}
}

func wantErrors(t *testing.T, yaml string, paths []string, msg string) {
	t.Helper()
	_, err := Parse([]byte(yaml))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Parse error = %v, want *spec.Errors", err)
	}
	if got := errs.Paths(); !slices.Equal(got, paths) {
		t.Fatalf("paths = %q, want %q\n%v", got, paths, err)
	}
	for _, fe := range errs.List {
		if !strings.Contains(fe.Message, msg) {
			t.Fatalf("message %q does not say %q", fe.Message, msg)
		}
	}
}
