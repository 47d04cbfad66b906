package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestListTasks(t *testing.T) {
	mk := func(dirs ...string) string {
		root := t.TempDir()
		for _, d := range dirs {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	for _, tc := range []struct {
		name    string
		version Version
		root    string
		want    []TaskRef
	}{
		{"v2 tasks and an empty alloc", V2, mk("p/a1/web", "p/a1/db", "p/a2", "other/a3/t"),
			[]TaskRef{{"a1", "db"}, {"a1", "web"}, {"a2", ""}}},
		{"v1 union of controllers", V1, mk("memory/p/a1/web", "pids/p/a1/web", "cpu/p/a2/t", "cpuset/p/a1/db"),
			[]TaskRef{{"a1", "db"}, {"a1", "web"}, {"a2", "t"}}},
		{"no parent yet", V2, mk(), []TaskRef{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ListTasks(tc.version, tc.root, "p")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("ListTasks = %v, want %v", got, tc.want)
			}
		})
	}
}
