package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// v2Controllers are enabled in every ancestor's cgroup.subtree_control.
const v2Controllers = "+cpu +memory +pids +cpuset"

// v2Group is a task cgroup on the unified hierarchy.
type v2Group struct {
	root string
	rel  string
}

var _ Group = (*v2Group)(nil)

func (g *v2Group) dir() string { return filepath.Join(g.root, g.rel) }

func (g *v2Group) Dirs() []string { return []string{g.dir()} }

func (g *v2Group) ProcsFiles() []string {
	return []string{filepath.Join(g.dir(), "cgroup.procs")}
}

func (g *v2Group) Create(lim Limits) error {
	// Controllers must be enabled in every ancestor before a child can use
	// them; the leaf itself stays a leaf (no subtree_control).
	dir := g.root
	for _, part := range strings.Split(g.rel, string(filepath.Separator)) {
		if err := writeFile(dir, "cgroup.subtree_control", v2Controllers); err != nil {
			return err
		}
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("create cgroup %s: %w", dir, err)
		}
	}
	cpuMax := fmt.Sprintf("max %d", cfsPeriod)
	if lim.CPUMilli > 0 {
		cpuMax = fmt.Sprintf("%d %d", cpuQuota(lim.CPUMilli), cfsPeriod)
	}
	writes := [][2]string{{"cpu.max", cpuMax}}
	if lim.MemoryBytes > 0 {
		writes = append(writes,
			[2]string{"memory.max", strconv.FormatInt(lim.MemoryBytes, 10)},
			// A task that hits its limit is killed whole, not one random
			// process of it.
			[2]string{"memory.oom.group", "1"})
	}
	pids := "max"
	if lim.PidsLimit > 0 {
		pids = strconv.FormatInt(lim.PidsLimit, 10)
	}
	writes = append(writes, [2]string{"pids.max", pids})
	writes = append(writes, cpusetWrites(&lim)...)
	for _, w := range writes {
		if err := writeFile(g.dir(), w[0], w[1]); err != nil {
			return err
		}
	}
	if controllerOn(g.root, "hugetlb") {
		if err := createV2Path(g.root, g.rel, "+hugetlb"); err != nil {
			return err
		}
		if err := writeHugetlb(g.dir(), "max", &lim); err != nil {
			return err
		}
	} else if lim.HugePages2Mi > 0 || lim.HugePages1Gi > 0 {
		return fmt.Errorf("huge pages asked for, but %s has no hugetlb controller", g.root)
	}
	if len(lim.DenyDevices) > 0 {
		if err := attachDeviceFilter(g.dir(), lim.DenyDevices); err != nil {
			return err
		}
	}
	// Swap is optional (no swap controller when the kernel lacks it).
	if lim.MemoryBytes > 0 && exists(filepath.Join(g.dir(), "memory.swap.max")) {
		if err := writeFile(g.dir(), "memory.swap.max", "0"); err != nil {
			return err
		}
	}
	return nil
}

func (g *v2Group) Procs() ([]int, error) { return readProcs(g.ProcsFiles()[0]) }

func (g *v2Group) OOMKills() (uint64, error) {
	return readKeyed(filepath.Join(g.dir(), "memory.events"), "oom_kill")
}

func (g *v2Group) MemoryLimit() (int64, error) {
	return readLimit(filepath.Join(g.dir(), "memory.max"))
}

func (g *v2Group) Kill(timeout time.Duration) error {
	// cgroup.kill (Linux 5.14+) kills atomically, forks included; the loop
	// below is the fallback and the confirmation that the group is empty.
	if exists(filepath.Join(g.dir(), "cgroup.kill")) {
		if err := writeFile(g.dir(), "cgroup.kill", "1"); err != nil {
			return fmt.Errorf("kill cgroup %s: %w", g.rel, err)
		}
	}
	if err := killAll(g.Procs, timeout); err != nil {
		return fmt.Errorf("kill cgroup %s: %w", g.rel, err)
	}
	return nil
}

func (g *v2Group) Remove() error {
	if err := removeDir(g.dir()); err != nil {
		return err
	}
	removeAllocDir(g.dir())
	return nil
}
