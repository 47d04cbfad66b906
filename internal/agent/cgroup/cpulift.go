package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LiftCPULimit removes the group's CPU quota for a while and returns the
// function that puts the quota it had back. Checkpoint and restore use it:
// criu's work runs inside the task's processes (its parasite on dump, its
// restorer on restore) and is the node's cost of moving the task, not the
// task's; under a 100m quota, reading a 100 MiB image back took 4.8 s
// instead of 0.4 s. A group without a CPU controller has nothing to lift.
func LiftCPULimit(g Group) (restore func() error, err error) {
	var file, unlimited string
	switch g := g.(type) {
	case *v1Group:
		file, unlimited = filepath.Join(g.dir("cpu"), "cpu.cfs_quota_us"), "-1"
	case *v2Group:
		file, unlimited = filepath.Join(g.dir(), "cpu.max"), "max"
	default:
		return func() error { return nil }, nil
	}
	old, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return func() error { return nil }, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cpu limit: %w", err)
	}
	saved := strings.TrimSpace(string(old))
	if _, ok := g.(*v2Group); ok && saved != "" {
		// cpu.max reads "quota period"; writing the quota alone keeps the period.
		saved = strings.Fields(saved)[0]
	}
	if err := os.WriteFile(file, []byte(unlimited), 0o644); err != nil {
		return nil, fmt.Errorf("lift cpu limit: %w", err)
	}
	return func() error {
		if err := os.WriteFile(file, []byte(saved), 0o644); err != nil {
			return fmt.Errorf("restore cpu limit %q: %w", saved, err)
		}
		return nil
	}, nil
}
