package cgroup

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// Resizing a running task's group in place (drivers.Resizer): its CPU
// quota and memory limit change, its processes stay.

// SetCPUMemory gives the group a new CPU quota (milli millicores, 0: no
// quota) and memory limit (bytes, 0: none), swap kept off as Create
// leaves it. On v1, where the kernel wants memory+swap at least the
// memory limit at every moment, a raise writes memsw first and a cut
// writes it last.
func SetCPUMemory(g Group, milli, memory int64) error {
	switch g := g.(type) {
	case *v2Group:
		return g.setCPUMemory(milli, memory)
	case *v1Group:
		return g.setCPUMemory(milli, memory)
	}
	return fmt.Errorf("resize cgroup: unknown group %T", g)
}

func (g *v2Group) setCPUMemory(milli, memory int64) error {
	cpuMax := fmt.Sprintf("max %d", cfsPeriod)
	if milli > 0 {
		cpuMax = fmt.Sprintf("%d %d", cpuQuota(milli), cfsPeriod)
	}
	if err := writeFile(g.dir(), "cpu.max", cpuMax); err != nil {
		return err
	}
	limit := "max"
	if memory > 0 {
		limit = strconv.FormatInt(memory, 10)
	}
	if err := writeFile(g.dir(), "memory.max", limit); err != nil {
		return err
	}
	if memory > 0 && exists(filepath.Join(g.dir(), "memory.swap.max")) {
		return writeFile(g.dir(), "memory.swap.max", "0")
	}
	return nil
}

func (g *v1Group) setCPUMemory(milli, memory int64) error {
	if err := g.applyCPU(Limits{CPUMilli: milli}); err != nil {
		return err
	}
	dir := g.dir("memory")
	if !exists(dir) {
		return nil
	}
	limit := "-1"
	if memory > 0 {
		limit = strconv.FormatInt(memory, 10)
	}
	memsw := exists(filepath.Join(dir, "memory.memsw.limit_in_bytes"))
	now, err := readLimit(filepath.Join(dir, "memory.limit_in_bytes"))
	if err != nil {
		return err
	}
	raise := memory <= 0 || (now > 0 && memory > now)
	if memsw && raise {
		if err := writeFile(dir, "memory.memsw.limit_in_bytes", limit); err != nil {
			return err
		}
	}
	if err := writeFile(dir, "memory.limit_in_bytes", limit); err != nil {
		return err
	}
	if memsw && !raise {
		return writeFile(dir, "memory.memsw.limit_in_bytes", limit)
	}
	return nil
}

// MemoryInUse is the memory the group's processes cannot give back on
// demand: anonymous memory and shared memory (tmpfs, shm), which without
// swap the kernel can only free by killing (memory.stat's anon and shmem
// on v2, total_rss and total_shmem on v1). Page cache is left out: a lower
// limit makes the kernel reclaim it.
func MemoryInUse(g Group) (int64, error) {
	var file string
	var keys []string
	switch g := g.(type) {
	case *v2Group:
		file, keys = filepath.Join(g.dir(), "memory.stat"), []string{"anon", "shmem"}
	case *v1Group:
		file, keys = filepath.Join(g.dir("memory"), "memory.stat"), []string{"total_rss", "total_shmem"}
	default:
		return 0, fmt.Errorf("memory in use: unknown group %T", g)
	}
	var total int64
	for _, k := range keys {
		n, err := readKeyed(file, k)
		if err != nil {
			return 0, err
		}
		total += int64(n)
	}
	return total, nil
}
