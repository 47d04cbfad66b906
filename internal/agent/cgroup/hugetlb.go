package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// hugetlbSizes are the page sizes a task's hugetlb limits cover, by the
// kernel's name for them in hugetlb.<size>.* files.
var hugetlbSizes = []struct {
	name  string
	limit func(*Limits) int64
}{
	{"2MB", func(l *Limits) int64 { return l.HugePages2Mi }},
	{"1GB", func(l *Limits) int64 { return l.HugePages1Gi }},
}

// hybridUnified is the cgroup2 mount of a hybrid host, relative to root.
const hybridUnified = "unified"

// controllerOn reports whether the cgroup2 directory dir offers
// controller to its children (its cgroup.controllers lists it).
func controllerOn(dir, controller string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	return err == nil && slices.Contains(strings.Fields(string(data)), controller)
}

// unifiedHugetlb reports whether a v1 host enforces huge pages through
// its cgroup2 mount: hugetlb is not mounted as a v1 hierarchy but is
// offered by <root>/unified (Debian 12's hybrid layout, and this
// project's test machines: docs/hardware.md).
func unifiedHugetlb(root string) bool {
	return !exists(filepath.Join(root, "hugetlb")) && controllerOn(filepath.Join(root, hybridUnified), "hugetlb")
}

// createV2Path creates rel below a cgroup2 root, enabling controllers
// (e.g. "+hugetlb") in every ancestor on the way.
func createV2Path(root, rel, controllers string) error {
	dir := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if err := writeFile(dir, "cgroup.subtree_control", controllers); err != nil {
			return err
		}
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("create cgroup %s: %w", dir, err)
		}
	}
	return nil
}

// writeHugetlb writes the task's limit of each page size into dir, the
// files being hugetlb.<size>.<suffix> (limit_in_bytes on v1, max on
// v2). Every size the kernel offers gets a limit, 0 for a size the task
// did not ask for: pages it was not granted belong to other tasks. A
// size the kernel does not offer (no such file) cannot be asked for on
// this node: the scheduler saw no pool of it.
func writeHugetlb(dir, suffix string, lim *Limits) error {
	for _, s := range hugetlbSizes {
		name := "hugetlb." + s.name + "." + suffix
		if !exists(filepath.Join(dir, name)) {
			if s.limit(lim) > 0 {
				return fmt.Errorf("huge pages of %s asked for, but %s has no %s", s.name, dir, name)
			}
			continue
		}
		if err := writeFile(dir, name, strconv.FormatInt(s.limit(lim), 10)); err != nil {
			return err
		}
	}
	return nil
}

// HugetlbEnforced says how this host limits huge pages ("v1 hugetlb
// hierarchy", "cgroup2 hugetlb (hybrid)", "cgroup2 hugetlb") or "" when
// it cannot; the agent logs it and docs/hardware.md explains it.
func HugetlbEnforced(v Version, root string) string {
	switch {
	case v == V1 && exists(filepath.Join(root, "hugetlb")):
		return "v1 hugetlb hierarchy"
	case v == V1 && unifiedHugetlb(root):
		return "cgroup2 hugetlb (hybrid)"
	case v == V2 && controllerOn(root, "hugetlb"):
		return "cgroup2 hugetlb"
	}
	return ""
}

// cpusetWrites are the cpuset files a task's limits set, in order.
func cpusetWrites(lim *Limits) [][2]string {
	var w [][2]string
	if len(lim.CPUs) > 0 {
		w = append(w, [2]string{"cpuset.cpus", FormatCPUList(lim.CPUs)})
	}
	switch {
	case len(lim.Mems) > 0:
		w = append(w, [2]string{"cpuset.mems", FormatCPUList(lim.Mems)})
	case len(lim.CPUs) > 0 && lim.NUMANode >= 0:
		w = append(w, [2]string{"cpuset.mems", strconv.Itoa(lim.NUMANode)})
	}
	return w
}

// LimitHugePages sets the huge page limits of a task cgroup that another
// runtime created (runc, for the containerd driver), before the task's
// process runs: in the v1 hugetlb hierarchy, in the v2 tree, or, on a
// hybrid host whose hugetlb controller is bound to the cgroup2 mount
// (which runc 1.1 cannot limit: "cannot set hugetlb limit"), in a group
// of that mount which pid, the container's init, is moved into. Every
// page size the kernel offers gets a limit, 0 for one not asked for.
func LimitHugePages(v Version, root, rel string, pid int, lim Limits) error {
	switch {
	case v == V1 && exists(filepath.Join(root, "hugetlb")):
		dir := filepath.Join(root, "hugetlb", rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create cgroup %s: %w", dir, err)
		}
		if err := writeHugetlb(dir, "limit_in_bytes", &lim); err != nil {
			return err
		}
		return writeFile(dir, "cgroup.procs", strconv.Itoa(pid))
	case v == V1 && unifiedHugetlb(root):
		base := filepath.Join(root, hybridUnified)
		if err := createV2Path(base, rel, "+hugetlb"); err != nil {
			return err
		}
		dir := filepath.Join(base, rel)
		if err := writeHugetlb(dir, "max", &lim); err != nil {
			return err
		}
		return writeFile(dir, "cgroup.procs", strconv.Itoa(pid))
	case v == V2 && controllerOn(root, "hugetlb"):
		if err := createV2Path(root, rel, "+hugetlb"); err != nil {
			return err
		}
		return writeHugetlb(filepath.Join(root, rel), "max", &lim)
	case lim.HugePages2Mi > 0 || lim.HugePages1Gi > 0:
		return fmt.Errorf("huge pages asked for, but %s has no hugetlb controller", root)
	}
	return nil
}

// ReleaseHugePages removes the cgroup2 group LimitHugePages made on a
// hybrid host once the task's processes are gone (runc removes only the
// groups it made); elsewhere runc's removal covers it.
func ReleaseHugePages(v Version, root, rel string) error {
	if v != V1 || !unifiedHugetlb(root) || rel == "" {
		return nil
	}
	dir := filepath.Join(root, hybridUnified, rel)
	if err := removeDir(dir); err != nil {
		return err
	}
	removeAllocDir(dir)
	return nil
}
