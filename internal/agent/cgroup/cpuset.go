package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SetCPUs rewrites the cpuset of the task cgroup at rel (relative to the
// hierarchy root) to cpus: on v1 <root>/cpuset/<rel>/cpuset.cpus, on v2
// <root>/<rel>/cpuset.cpus. A group that no longer exists, or a host whose
// cpuset controller is not there (v1 without the cpuset hierarchy, v2
// without cpuset enabled above the group), is left alone and reports
// changed false: the task is gone, or nothing could confine it anyway.
func SetCPUs(v Version, root, rel string, cpus []int) (changed bool, err error) {
	var dir string
	switch v {
	case V1:
		dir = filepath.Join(root, "cpuset", rel)
	case V2:
		dir = filepath.Join(root, rel)
	default:
		return false, fmt.Errorf("set cpuset of %s: unknown version %d", rel, v)
	}
	file := filepath.Join(dir, "cpuset.cpus")
	cur, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", file, err)
	}
	want := FormatCPUList(cpus)
	if strings.TrimSpace(string(cur)) == want {
		return false, nil
	}
	if err := writeFile(dir, "cpuset.cpus", want); err != nil {
		if !exists(dir) { // removed while we looked: the task ended
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// SharedPool is the cpuset of tasks that are not pinned: every core in
// all but those reserved by exclusive allocations, sorted. When the
// reservations take every core the pool is all of them: a cpuset cannot
// be empty (the kernel refuses it for a group with tasks), and a shared
// task must run somewhere; the caller says so in its log.
func SharedPool(all []int, reserved [][]int) (pool []int, starved bool) {
	taken := map[int]bool{}
	for _, r := range reserved {
		for _, c := range r {
			taken[c] = true
		}
	}
	for _, c := range all {
		if !taken[c] {
			pool = append(pool, c)
		}
	}
	if len(pool) == 0 {
		pool, starved = append([]int(nil), all...), len(all) > 0
	}
	sort.Ints(pool)
	return pool, starved
}
