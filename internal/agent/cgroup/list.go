package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// TaskRef names one task cgroup, <parent>/<AllocID>/<Task>. Task is empty
// for an allocation directory that holds no task directory.
type TaskRef struct {
	AllocID string
	Task    string
}

// Rel is the cgroup path of ref relative to the cgroup root.
func (ref TaskRef) Rel(parent string) string {
	return filepath.Join(parent, ref.AllocID, ref.Task)
}

// ListTasks lists the task cgroups under parent, in every hierarchy of
// version v (each v1 controller a task joins, or the v2 tree), sorted.
// An agent uses it at start to find cgroups it has no record of.
func ListTasks(v Version, root, parent string) ([]TaskRef, error) {
	var bases []string
	switch v {
	case V1:
		for _, c := range v1Controllers {
			if exists(filepath.Join(root, c)) {
				bases = append(bases, filepath.Join(root, c, parent))
			}
		}
		if unifiedHugetlb(root) {
			bases = append(bases, filepath.Join(root, hybridUnified, parent))
		}
	case V2:
		bases = []string{filepath.Join(root, parent)}
	default:
		return nil, fmt.Errorf("list cgroups under %s: unknown version %d", parent, v)
	}
	seen := map[TaskRef]bool{}
	for _, base := range bases {
		allocs, err := subdirs(base)
		if err != nil {
			return nil, err
		}
		for _, alloc := range allocs {
			tasks, err := subdirs(filepath.Join(base, alloc))
			if err != nil {
				return nil, err
			}
			if len(tasks) == 0 {
				seen[TaskRef{AllocID: alloc}] = true
			}
			for _, task := range tasks {
				seen[TaskRef{AllocID: alloc, Task: task}] = true
			}
		}
	}
	out := make([]TaskRef, 0, len(seen))
	for ref := range seen {
		out = append(out, ref)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].AllocID != out[j].AllocID {
			return out[i].AllocID < out[j].AllocID
		}
		return out[i].Task < out[j].Task
	})
	return out, nil
}

// subdirs lists the directories in dir; a missing dir has none.
func subdirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list cgroups in %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
