package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// v1Controllers are the hierarchies a task joins on cgroup v1 (cpuacct for
// its CPU usage, when it is mounted apart from cpu; devices to deny the
// node's devices the task was not given; hugetlb for huge pages).
var v1Controllers = []string{"cpu", "cpuacct", "memory", "pids", "cpuset", "devices", "hugetlb"}

// v1Group is a task cgroup on cgroup v1: one directory per controller.
type v1Group struct {
	root string
	rel  string
}

var _ Group = (*v1Group)(nil)

func (g *v1Group) dir(controller string) string {
	return filepath.Join(g.root, controller, g.rel)
}

func (g *v1Group) Dirs() []string {
	dirs := make([]string, 0, len(v1Controllers)+1)
	for _, c := range v1Controllers {
		if exists(filepath.Join(g.root, c)) {
			dirs = append(dirs, g.dir(c))
		}
	}
	if unifiedHugetlb(g.root) {
		dirs = append(dirs, g.dir(hybridUnified))
	}
	return dirs
}

func (g *v1Group) ProcsFiles() []string {
	dirs := g.Dirs()
	files := make([]string, len(dirs))
	for i, d := range dirs {
		files[i] = filepath.Join(d, "cgroup.procs")
	}
	return files
}

func (g *v1Group) Create(lim Limits) error {
	for _, c := range v1Controllers {
		if !exists(filepath.Join(g.root, c)) {
			continue
		}
		if c == "cpuset" {
			if err := g.createCpuset(); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(g.dir(c), 0o755); err != nil {
			return fmt.Errorf("create cgroup %s: %w", g.dir(c), err)
		}
	}
	if err := g.applyCPU(lim); err != nil {
		return err
	}
	if err := g.applyMemory(lim); err != nil {
		return err
	}
	if err := g.applyDevicesV1(lim); err != nil {
		return err
	}
	if dir := g.dir("pids"); exists(dir) {
		max := "max"
		if lim.PidsLimit > 0 {
			max = strconv.FormatInt(lim.PidsLimit, 10)
		}
		if err := writeFile(dir, "pids.max", max); err != nil {
			return err
		}
	}
	if exists(g.dir("cpuset")) {
		for _, w := range cpusetWrites(&lim) {
			if err := writeFile(g.dir("cpuset"), w[0], w[1]); err != nil {
				return err
			}
		}
	}
	return g.applyHugetlb(&lim)
}

// applyHugetlb limits huge pages through the v1 hugetlb hierarchy, or on
// a hybrid host through the cgroup2 mount, whose group the task joins
// beside its v1 groups (Dirs).
func (g *v1Group) applyHugetlb(lim *Limits) error {
	switch {
	case exists(g.dir("hugetlb")):
		return writeHugetlb(g.dir("hugetlb"), "limit_in_bytes", lim)
	case unifiedHugetlb(g.root):
		if err := createV2Path(filepath.Join(g.root, hybridUnified), g.rel, "+hugetlb"); err != nil {
			return err
		}
		return writeHugetlb(g.dir(hybridUnified), "max", lim)
	case lim.HugePages2Mi > 0 || lim.HugePages1Gi > 0:
		return fmt.Errorf("huge pages asked for, but %s has no hugetlb controller", g.root)
	}
	return nil
}

// createCpuset creates each level below the cpuset root and copies the
// parent's cpus and mems into it: a v1 cpuset with empty cpus or mems
// refuses tasks and children.
func (g *v1Group) createCpuset() error {
	base := filepath.Join(g.root, "cpuset")
	dir := base
	for _, part := range strings.Split(g.rel, string(filepath.Separator)) {
		parent := dir
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("create cgroup %s: %w", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			cur, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				return fmt.Errorf("read %s: %w", filepath.Join(dir, f), err)
			}
			if strings.TrimSpace(string(cur)) != "" {
				continue
			}
			val, err := os.ReadFile(filepath.Join(parent, f))
			if err != nil {
				return fmt.Errorf("read %s: %w", filepath.Join(parent, f), err)
			}
			if err := writeFile(dir, f, strings.TrimSpace(string(val))); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *v1Group) applyCPU(lim Limits) error {
	dir := g.dir("cpu")
	if !exists(dir) {
		return nil
	}
	if err := writeFile(dir, "cpu.cfs_period_us", strconv.Itoa(cfsPeriod)); err != nil {
		return err
	}
	quota := int64(-1)
	if lim.CPUMilli > 0 {
		quota = cpuQuota(lim.CPUMilli)
	}
	return writeFile(dir, "cpu.cfs_quota_us", strconv.FormatInt(quota, 10))
}

func (g *v1Group) applyMemory(lim Limits) error {
	dir := g.dir("memory")
	if !exists(dir) || lim.MemoryBytes <= 0 {
		return nil
	}
	limit := strconv.FormatInt(lim.MemoryBytes, 10)
	if err := writeFile(dir, "memory.limit_in_bytes", limit); err != nil {
		return err
	}
	// Without swap accounting the kernel could push the task into swap
	// instead of enforcing the limit; memsw must be set after the limit.
	if exists(filepath.Join(dir, "memory.memsw.limit_in_bytes")) {
		if err := writeFile(dir, "memory.memsw.limit_in_bytes", limit); err != nil {
			return err
		}
	}
	if exists(filepath.Join(dir, "memory.swappiness")) {
		if err := writeFile(dir, "memory.swappiness", "0"); err != nil {
			return err
		}
	}
	return nil
}

func (g *v1Group) Procs() ([]int, error) {
	seen := map[int]bool{}
	var pids []int
	for _, f := range g.ProcsFiles() {
		list, err := readProcs(f)
		if err != nil {
			return nil, err
		}
		for _, p := range list {
			if !seen[p] {
				seen[p] = true
				pids = append(pids, p)
			}
		}
	}
	return pids, nil
}

func (g *v1Group) OOMKills() (uint64, error) {
	return readKeyed(filepath.Join(g.dir("memory"), "memory.oom_control"), "oom_kill")
}

func (g *v1Group) MemoryLimit() (int64, error) {
	return readLimit(filepath.Join(g.dir("memory"), "memory.limit_in_bytes"))
}

func (g *v1Group) Kill(timeout time.Duration) error {
	if err := killAll(g.Procs, timeout); err != nil {
		return fmt.Errorf("kill cgroup %s: %w", g.rel, err)
	}
	return nil
}

func (g *v1Group) Remove() error {
	for _, dir := range g.Dirs() {
		if err := removeDir(dir); err != nil {
			return err
		}
		removeAllocDir(dir)
	}
	return nil
}

// readLimit reads a limit file; "max" or the v1 "unlimited" sentinel
// (a value near 2^63) read as 0.
func readLimit(file string) (int64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", file, err)
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", file, err)
	}
	if n >= 1<<62 {
		return 0, nil
	}
	return n, nil
}
