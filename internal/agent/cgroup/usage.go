package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Usage is what a task's processes have used, read from its cgroup.
type Usage struct {
	// CPUSeconds is the CPU time used since the group was created.
	CPUSeconds float64
	// MemoryBytes is the memory in use now (page cache included, as the
	// kernel charges it).
	MemoryBytes int64
	// HasCPU and HasMemory say which of the two the group's directories
	// account (a v1 host may lack a controller).
	HasCPU, HasMemory bool
}

// ReadUsage reads the usage of a group from its directories (Group.Dirs,
// or the Cgroups a task handle recorded): on cgroup v2 cpu.stat's
// usage_usec and memory.current, on v1 cpuacct.usage (in the cpu or
// cpuacct hierarchy) and memory.usage_in_bytes. A directory that is gone
// (the task ended) reads as no usage.
func ReadUsage(dirs []string) (Usage, error) {
	var u Usage
	for _, dir := range dirs {
		if usec, ok, err := readKeyedIn(filepath.Join(dir, "cpu.stat"), "usage_usec"); err != nil {
			return u, err
		} else if ok {
			u.CPUSeconds, u.HasCPU = float64(usec)/1e6, true
		}
		if ns, ok, err := readNumber(filepath.Join(dir, "cpuacct.usage")); err != nil {
			return u, err
		} else if ok && !u.HasCPU {
			u.CPUSeconds, u.HasCPU = float64(ns)/1e9, true
		}
		for _, name := range []string{"memory.current", "memory.usage_in_bytes"} {
			if b, ok, err := readNumber(filepath.Join(dir, name)); err != nil {
				return u, err
			} else if ok {
				u.MemoryBytes, u.HasMemory = int64(b), true
			}
		}
	}
	return u, nil
}

// readNumber reads a file holding one unsigned number; ok is false when
// the file does not exist.
func readNumber(file string) (n uint64, ok bool, err error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrInvalid) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read %s: %w", file, err)
	}
	n, err = strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("parse %s: %w", file, err)
	}
	return n, true, nil
}

// readKeyedIn reads key from a "key value" file; ok is false when the file
// or the key is missing (v1's cpu.stat has no usage_usec).
func readKeyedIn(file, key string) (uint64, bool, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read %s: %w", file, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 2 && fields[0] == key {
			n, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0, false, fmt.Errorf("parse %s %s: %w", file, key, err)
			}
			return n, true, nil
		}
	}
	return 0, false, nil
}
