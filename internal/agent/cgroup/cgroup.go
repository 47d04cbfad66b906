package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Version is the cgroup hierarchy flavour of a host.
type Version int

// Cgroup hierarchy versions.
const (
	V1 Version = 1
	V2 Version = 2
)

// DefaultRoot is where cgroup file systems are mounted.
const DefaultRoot = "/sys/fs/cgroup"

// Parent is the cgroup under which all task cgroups are created.
const Parent = "strata"

// cfsPeriod is the CFS period used for CPU quotas, in microseconds (100ms).
const cfsPeriod = 100000

// ErrNoCgroups is returned by Detect when root holds no usable hierarchy.
var ErrNoCgroups = errors.New("no usable cgroup hierarchy")

// Limits are the resource limits of one task cgroup. Zero means unlimited.
type Limits struct {
	CPUMilli    int64
	MemoryBytes int64
	PidsLimit   int64
	CPUs        []int // cpuset pinning; empty leaves the parent's set
	NUMANode    int   // cpuset.mems when CPUs is set; -1 means the parent's mems
	// Mems, when set, is cpuset.mems (the NUMA nodes of the memory tiers
	// the task accepts) and wins over NUMANode.
	Mems []int
	// Huge pages the task may use, in bytes, enforced by the hugetlb
	// controller where the host has one (hugetlb.go); a size left at 0 is
	// limited to none.
	HugePages2Mi, HugePages1Gi int64
	// DenyDevices are device nodes the task must not open: the node's
	// GPUs and other devices it was not given (devices.go).
	DenyDevices []DeviceRule
}

// Group is one task's cgroup. Implementations are safe for concurrent use
// when the cgroup files are; every method may block on file I/O only.
type Group interface {
	// Create makes the cgroup directories (and the ancestors it needs) and
	// writes lim into them.
	Create(lim Limits) error
	// Dirs returns the absolute cgroup directories of the group.
	Dirs() []string
	// ProcsFiles returns the cgroup.procs files a process writes its pid to
	// so that it joins the group.
	ProcsFiles() []string
	// Procs lists the pids in the group.
	Procs() ([]int, error)
	// OOMKills returns the kernel's count of OOM kills in the group.
	OOMKills() (uint64, error)
	// MemoryLimit returns the memory limit in bytes, 0 when unlimited.
	MemoryLimit() (int64, error)
	// Kill sends SIGKILL to every process in the group and returns once the
	// group is empty or timeout passed.
	Kill(timeout time.Duration) error
	// Remove deletes the group's directories, and the allocation's directory
	// when it became empty. Removing a group that does not exist is no error.
	Remove() error
}

// Detect reports which cgroup version is usable under root. A hybrid host
// (v1 controllers plus a unified mount without them) is V1.
func Detect(root string) (Version, error) {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return V2, nil
	}
	if _, err := os.Stat(filepath.Join(root, "memory", "memory.limit_in_bytes")); err == nil {
		return V1, nil
	}
	return 0, fmt.Errorf("detect cgroups under %s: %w", root, ErrNoCgroups)
}

// Open returns the group at rel (e.g. "strata/<alloc>/<task>") under root
// for version v, without touching the file system.
func Open(v Version, root, rel string) (Group, error) {
	switch v {
	case V1:
		return &v1Group{root: root, rel: rel}, nil
	case V2:
		return &v2Group{root: root, rel: rel}, nil
	}
	return nil, fmt.Errorf("open cgroup %s: unknown version %d", rel, v)
}

// TaskPath is the path of a task's cgroup relative to a hierarchy root.
func TaskPath(allocID, task string) string {
	return filepath.Join(Parent, allocID, task)
}

// cpuQuota returns the CFS quota in microseconds for milli millicores.
func cpuQuota(milli int64) int64 {
	q := milli * cfsPeriod / 1000
	if q < 1000 { // the kernel refuses quotas under 1ms
		q = 1000
	}
	return q
}

// FormatCPUList renders cpus as a kernel cpulist, e.g. "0-3,8".
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		} else {
			fmt.Fprintf(&b, "%d", cpus[i])
		}
		i = j + 1
	}
	return b.String()
}

func writeFile(dir, name, value string) error {
	if err := os.WriteFile(filepath.Join(dir, name), []byte(value), 0o644); err != nil {
		return fmt.Errorf("write %s=%q: %w", filepath.Join(dir, name), value, err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func readProcs(file string) ([]int, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", file, err)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// readKeyed returns the value of key in a "key value" per line file such as
// memory.events or memory.oom_control. A missing file or key reads as 0.
func readKeyed(file, key string) (uint64, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", file, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == key {
			n, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse %s %s: %w", file, key, err)
			}
			return n, nil
		}
	}
	return 0, nil
}

// killAll SIGKILLs the pids listed by list until it returns none or timeout
// passes; a fork racing the kill is caught by the next round.
func killAll(list func() ([]int, error), timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids, err := list()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup still holds pids %v after %s", pids, timeout)
		}
		for _, pid := range pids {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("kill %d: %w", pid, err)
			}
		}
		time.Sleep(10 * time.Millisecond) // let the kernel reap before listing again
	}
}

// removeDir removes a cgroup directory, retrying briefly while the kernel
// still counts exiting tasks (EBUSY).
func removeDir(dir string) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := syscall.Rmdir(dir)
		switch {
		case err == nil, errors.Is(err, syscall.ENOENT):
			return nil
		case errors.Is(err, syscall.EBUSY) && time.Now().Before(deadline):
			time.Sleep(10 * time.Millisecond)
			continue
		case errors.Is(err, syscall.ENOTEMPTY):
			// A fake root (tests) holds plain files; a real cgroupfs never
			// reports ENOTEMPTY for control files, only for child groups.
			if onlyFiles(dir) {
				return os.RemoveAll(dir)
			}
		}
		return fmt.Errorf("remove cgroup %s: %w", dir, err)
	}
}

func onlyFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() {
			return false
		}
	}
	return true
}

// removeAllocDir removes the allocation-level directory above a task group
// when no other task group remains in it.
func removeAllocDir(taskDir string) {
	allocDir := filepath.Dir(taskDir)
	entries, err := os.ReadDir(allocDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			return
		}
	}
	_ = removeDir(allocDir) // best effort: a sibling may be created concurrently
}
