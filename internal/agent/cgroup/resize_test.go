package cgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A fake root cannot refuse an order of writes: the v1 order (memsw before
// a raise, after a cut) is the kernel's to check, in the exec driver's
// TestResizeInPlace on a v1 host.

func TestV2ResizeWritesToFakeRoot(t *testing.T) {
	root := t.TempDir()
	rel := TaskPath("alloc1", "web")
	dir := filepath.Join(root, rel)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("max"), 0o644)
	os.WriteFile(filepath.Join(dir, "memory.stat"), []byte("anon 1048576\nfile 9999999\nshmem 2097152\n"), 0o644)
	g, _ := Open(V2, root, rel)
	if err := g.Create(Limits{CPUMilli: 500, MemoryBytes: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		milli, memory  int64
		cpuMax, memMax string
		swapMax        string
	}{
		{1500, 128 << 20, "150000 100000", "134217728", "0"},
		{250, 32 << 20, "25000 100000", "33554432", "0"},
		{0, 0, "max 100000", "max", "0"},
	} {
		if err := SetCPUMemory(g, tc.milli, tc.memory); err != nil {
			t.Fatal(err)
		}
		for f, want := range map[string]string{"cpu.max": tc.cpuMax, "memory.max": tc.memMax, "memory.swap.max": tc.swapMax} {
			if got := readTrim(t, filepath.Join(dir, f)); got != want {
				t.Errorf("resize to %dm %d: %s = %q, want %q", tc.milli, tc.memory, f, got, want)
			}
		}
	}
	// Page cache is not in use: the kernel reclaims it under a new limit.
	if n, err := MemoryInUse(g); err != nil || n != 3<<20 {
		t.Errorf("MemoryInUse = %d, %v; want anon+shmem 3 MiB", n, err)
	}
}

func TestV1ResizeWritesToFakeRoot(t *testing.T) {
	root := t.TempDir()
	rel := TaskPath("alloc1", "web")
	for _, c := range []string{"cpu", "memory"} {
		os.MkdirAll(filepath.Join(root, c, rel), 0o755)
	}
	mem := filepath.Join(root, "memory", rel)
	os.WriteFile(filepath.Join(mem, "memory.memsw.limit_in_bytes"), []byte("9223372036854771712"), 0o644)
	os.WriteFile(filepath.Join(mem, "memory.stat"), []byte("cache 5\nrss 7\ntotal_cache 999\ntotal_rss 4096\ntotal_shmem 1024\n"), 0o644)
	g, _ := Open(V1, root, rel)
	if err := g.(*v1Group).applyMemory(Limits{MemoryBytes: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	for _, memory := range []int64{128 << 20, 32 << 20} {
		if err := SetCPUMemory(g, 700, memory); err != nil {
			t.Fatal(err)
		}
		want := strconv.FormatInt(memory, 10)
		for _, f := range []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"} {
			if got := readTrim(t, filepath.Join(mem, f)); got != want {
				t.Errorf("resize to %d: %s = %q, want %q", memory, f, got, want)
			}
		}
		if got := readTrim(t, filepath.Join(root, "cpu", rel, "cpu.cfs_quota_us")); got != "70000" {
			t.Errorf("cpu.cfs_quota_us = %q, want 70000", got)
		}
	}
	if n, err := MemoryInUse(g); err != nil || n != 5120 {
		t.Errorf("MemoryInUse = %d, %v; want total_rss+total_shmem 5120", n, err)
	}
}
