package spec

import (
	"errors"
	"strings"
	"testing"
)

func TestParseNamespace(t *testing.T) {
	ns, err := ParseNamespace([]byte("name: team-a\ndescription: web\nquota: {cpu: 16, memory: 64Gi, gpu: 0.5, devices: 4, allocations: 50, maxPriority: 999, workloads: 10, replicas: 500}\nallowRootTasks: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	q := ns.Quota
	if ns.Name != "team-a" || ns.Description != "web" || !ns.AllowRootTasks || *q.CPUMilli != 16000 || *q.MemoryBytes != 64<<30 ||
		*q.GPUMilli != 500 || *q.Devices != 4 || *q.Allocations != 50 || *q.MaxPriority != 999 || *q.Workloads != 10 || *q.Replicas != 500 {
		t.Fatalf("decoded %+v quota %+v", ns, q)
	}
	// The API's own names, as -o json prints them, apply again.
	ns, err = ParseNamespace([]byte(`{"name": "b", "quota": {"cpuMilli": 500, "memoryBytes": 1024, "gpuMilli": 0}, "createIndex": 3, "modifyIndex": 4}`))
	if err != nil || *ns.Quota.CPUMilli != 500 || *ns.Quota.MemoryBytes != 1024 || *ns.Quota.GPUMilli != 0 {
		t.Fatalf("API names: %+v, %v", ns, err)
	}
	if ns, err := ParseNamespace([]byte("name: c\n")); err != nil || ns.Quota != nil {
		t.Fatalf("no quota: %+v, %v", ns, err)
	}
}

func TestParseNamespaceErrors(t *testing.T) {
	cases := []struct {
		name, doc string
		paths     []string
		msg       string
	}{
		{"memory without a unit", "name: a\nquota: {memory: 64}\n", []string{"quota.memory"}, "64 has no unit"},
		{"misspelt quota field", "name: a\nquota: {memroy: 64Gi}\n", []string{"quota.memroy"}, `did you mean "memory"?`},
		{"both spellings", "name: a\nquota: {cpuMilli: 1, cpu: 2}\n", []string{"quota.cpuMilli"}, "give cpu or cpuMilli, not both"},
		{"unknown top-level field", "name: a\nquotas: {}\n", []string{"quotas"}, `did you mean "quota"?`},
		{"negative", "name: a\nquota: {allocations: -1}\n", []string{"quota.allocations"}, "negative"},
		{"bad cpu", "name: a\nquota: {cpu: lots}\n", []string{"quota.cpu"}, "unparseable"},
		{"no name", "quota: {cpu: 1}\n", []string{"name"}, "required"},
		{"bad name", "name: Team_A\n", []string{"name"}, "invalid name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseNamespace([]byte(tc.doc))
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want *Errors", err)
			}
			var paths []string
			for _, fe := range errs.List {
				paths = append(paths, fe.Path)
			}
			if strings.Join(paths, ",") != strings.Join(tc.paths, ",") || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v (paths %q), want paths %q and %q", err, paths, tc.paths, tc.msg)
			}
		})
	}
}
