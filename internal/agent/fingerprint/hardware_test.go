package fingerprint

import (
	"context"
	"reflect"
	"runtime"
	"testing"

	"github.com/strata-dev/strata/api"
)

// TestFingerprintHugePagesTiersAndCPU reads a fake sysfs and procfs: a
// CPU-less NUMA node with memory is the slow tier, the 2Mi and 1Gi pools
// are capacity, a 64Ki pool is reported apart, and cpuinfo's flags are
// narrowed to FeatureFlags.
func TestFingerprintHugePagesTiersAndCPU(t *testing.T) {
	sys, proc := t.TempDir(), t.TempDir()
	write(t, sys, "devices/system/node/node0/cpulist", "0-3\n")
	write(t, sys, "devices/system/node/node0/meminfo", "Node 0 MemTotal:       65536 kB\n")
	write(t, sys, "devices/system/node/node1/cpulist", "\n")
	write(t, sys, "devices/system/node/node1/meminfo", "Node 1 MemTotal:      262144 kB\n")
	write(t, sys, "devices/system/node/node2/cpulist", "\n") // memoryless and CPU-less: offline
	write(t, sys, "devices/system/node/node2/meminfo", "Node 2 MemTotal:           0 kB\n")
	write(t, sys, "kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "32\n")
	write(t, sys, "kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "2\n")
	write(t, sys, "kernel/mm/hugepages/hugepages-64kB/nr_hugepages", "5\n")
	write(t, proc, "meminfo", "MemTotal:        327680 kB\n")
	write(t, proc, "cpuinfo", "processor\t: 0\nflags\t\t: fpu sse4_2 avx2 avx512f hypervisor avx512_bf16 amx_tile\n\nprocessor\t: 1\nflags\t\t: fpu\n")

	res, err := Fingerprint(context.Background(), Options{SysRoot: sys, ProcRoot: proc, GPUCommand: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	wantNUMA := []api.NUMANode{
		{ID: 0, CPUs: []int{0, 1, 2, 3}, MemoryBytes: 64 << 20},
		{ID: 1, MemoryBytes: 256 << 20, Tier: api.MemoryTierSlow},
		{ID: 2},
	}
	if !reflect.DeepEqual(res.NUMA, wantNUMA) {
		t.Errorf("NUMA = %+v, want %+v", res.NUMA, wantNUMA)
	}
	if res.HugePages != (api.Resources{HugePages2Mi: 64 << 20, HugePages1Gi: 2 << 30}) {
		t.Errorf("huge pages = %+v, want 64Mi of 2Mi and 2Gi of 1Gi", res.HugePages)
	}
	if !reflect.DeepEqual(res.OtherHugePages, []string{"5 pages of 64KiB"}) {
		t.Errorf("other huge pages = %q", res.OtherHugePages)
	}
	if want := []string{"amx_tile", "avx2", "avx512_bf16", "avx512f", "sse4_2"}; !reflect.DeepEqual(res.CPUFeatures, want) {
		t.Errorf("cpu features = %q, want %q", res.CPUFeatures, want)
	}
	if res.CPUArch != runtime.GOARCH {
		t.Errorf("cpu arch = %q, want %q", res.CPUArch, runtime.GOARCH)
	}
}

func TestFingerprintArm64Features(t *testing.T) {
	proc := t.TempDir()
	write(t, proc, "cpuinfo", "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes sha2 atomics sve sve2\n")
	got, err := CPUFeatures(proc)
	if want := []string{"aes", "asimd", "atomics", "sha2", "sve", "sve2"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("CPUFeatures = %q, %v; want %q", got, err, want)
	}
}

// TestFingerprintThisHost reads the real sysfs and procfs: whatever the
// host has, it must parse.
func TestFingerprintThisHost(t *testing.T) {
	if _, _, err := HugePages("/sys"); err != nil {
		t.Errorf("HugePages(/sys): %v", err)
	}
	if _, err := CPUFeatures("/proc"); err != nil {
		t.Errorf("CPUFeatures(/proc): %v", err)
	}
}
