package containerd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func ptr[T any](v T) *T { return &v }

func TestApplyLimits(t *testing.T) {
	for _, c := range []struct {
		name string
		l    limits
		want specs.LinuxResources
	}{
		{"nothing asked: nothing capped", limits{NUMANode: -1},
			specs.LinuxResources{CPU: &specs.LinuxCPU{}}},
		{"half a core, 64MiB, 32 pids", limits{CPUMilli: 500, MemoryBytes: 64 << 20, PidsLimit: 32, NUMANode: -1},
			specs.LinuxResources{
				CPU:    &specs.LinuxCPU{Quota: ptr(int64(50000)), Period: ptr(uint64(100000))},
				Memory: &specs.LinuxMemory{Limit: ptr(int64(64 << 20))},
				Pids:   &specs.LinuxPids{Limit: ptr(int64(32))},
			}},
		{"tiny cpu is raised to the kernel's 1ms minimum", limits{CPUMilli: 1, NUMANode: -1},
			specs.LinuxResources{CPU: &specs.LinuxCPU{Quota: ptr(int64(1000)), Period: ptr(uint64(100000))}}},
		{"swap accounted: memory+swap capped at the limit", limits{MemoryBytes: 1 << 30, NoSwap: true, NUMANode: -1},
			specs.LinuxResources{CPU: &specs.LinuxCPU{}, Memory: &specs.LinuxMemory{Limit: ptr(int64(1 << 30)), Swap: ptr(int64(1 << 30))}}},
		{"exclusive cores pin cpus and the NUMA node's memory", limits{CPUMilli: 2000, CPUs: []int{2, 3, 4, 8}, NUMANode: 1},
			specs.LinuxResources{CPU: &specs.LinuxCPU{Quota: ptr(int64(200000)), Period: ptr(uint64(100000)), Cpus: "2-4,8", Mems: "1"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &specs.Spec{}
			applyLimits(s, c.l)
			if got, want := describeResources(s.Linux.Resources), describeResources(&c.want); got != want {
				t.Fatalf("resources:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// describeResources renders the fields applyLimits sets, pointers followed.
func describeResources(r *specs.LinuxResources) string {
	val := func(p any) string {
		switch v := p.(type) {
		case *int64:
			if v != nil {
				return fmt.Sprint(*v)
			}
		case *uint64:
			if v != nil {
				return fmt.Sprint(*v)
			}
		}
		return "-"
	}
	var b strings.Builder
	if r.CPU != nil {
		fmt.Fprintf(&b, "cpu{quota=%s period=%s cpus=%q mems=%q}", val(r.CPU.Quota), val(r.CPU.Period), r.CPU.Cpus, r.CPU.Mems)
	}
	if r.Memory != nil {
		fmt.Fprintf(&b, " mem{limit=%s swap=%s}", val(r.Memory.Limit), val(r.Memory.Swap))
	}
	if r.Pids != nil {
		fmt.Fprintf(&b, " pids{%s}", val(r.Pids.Limit))
	}
	return b.String()
}

func writeEmpty(path string) error { return os.WriteFile(path, nil, 0o644) }

func TestContainerID(t *testing.T) {
	for _, c := range []struct{ task, want string }{
		{"3f2a9c1e-0b4d-4e0f-9a11-2b3c4d5e6f70/server", "3f2a9c1e-0b4d-4e0f-9a11-2b3c4d5e6f70.server"},
		{"a/inference-engine", "a.inference-engine"},
	} {
		if got := containerID(c.task); got != c.want {
			t.Errorf("containerID(%q) = %q, want %q", c.task, got, c.want)
		}
	}
	// Names containerd refuses (doubled separators, other characters) get
	// a digest: stable, distinct and valid.
	a, b := containerID("alloc/web--1"), containerID("alloc/web__1")
	if a == b || !containerIDPattern.MatchString(a) || !strings.HasPrefix(a, "strata-") || a != containerID("alloc/web--1") {
		t.Fatalf("digest ids %q %q: want distinct, stable and valid", a, b)
	}
}

func TestGPUDevicesOnlyThoseThatExist(t *testing.T) {
	dev, proc := t.TempDir(), t.TempDir()
	for _, n := range []string{"nvidia0", "nvidia1", "nvidia3", "nvidiactl"} {
		if err := writeEmpty(dev + "/" + n); err != nil {
			t.Fatal(err)
		}
	}
	info := filepath.Join(proc, "driver", "nvidia", "gpus", "0000:07:00.0")
	os.MkdirAll(info, 0o755)
	os.WriteFile(filepath.Join(info, "information"), []byte("Model: \t\t NVIDIA A100\nGPU UUID: \t GPU-5f1c\nDevice Minor: \t 3\n"), 0o644)

	got := gpuDevices([]string{"1", "GPU-5f1c", "GPU-unknown", "7"}, dev, proc)
	want := []string{dev + "/nvidia1", dev + "/nvidia3", dev + "/nvidiactl"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("gpuDevices = %q, want %q", got, want)
	}
	if gpuDevices(nil, dev, proc) != nil {
		t.Fatal("no GPUs assigned must give no devices")
	}
}

// TestGivenDevicesJoinTheAllowList: the agent's device nodes for the
// task (an FPGA's, a GPU's already listed) are allowed once each, and
// those missing on the host are left out.
func TestGivenDevicesJoinTheAllowList(t *testing.T) {
	dev := t.TempDir()
	for _, n := range []string{"nvidia0", "xclmgmt1"} {
		if err := writeEmpty(dev + "/" + n); err != nil {
			t.Fatal(err)
		}
	}
	got := withGiven([]string{dev + "/nvidia0"}, []string{dev + "/nvidia0", dev + "/xclmgmt1", dev + "/gone"})
	want := []string{dev + "/nvidia0", dev + "/xclmgmt1"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("withGiven = %q, want %q", got, want)
	}
}
