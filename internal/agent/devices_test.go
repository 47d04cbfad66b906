package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
)

func TestTaskDevicesSplitByRequests(t *testing.T) {
	alloc := &api.Allocation{
		TaskGroup: &api.TaskGroup{Tasks: []*api.Task{
			{Name: "a", Devices: []api.DeviceRequest{{Class: "fpga", Count: 2}, {Class: "nic-vf", Count: 1}}},
			{Name: "b"},
			{Name: "c", Devices: []api.DeviceRequest{{Class: "fpga", Count: 1}}},
		}},
		Assignment: api.Assignment{Devices: []string{"f0", "f1", "v0", "f2"}},
	}
	got := taskDevices(alloc)
	if strings.Join(got["a"], ",") != "f0,f1,v0" || len(got["b"]) != 0 || strings.Join(got["c"], ",") != "f2" {
		t.Fatalf("taskDevices = %v", got)
	}
}

// TestDeviceNodesForTask: a task is given its allocation's GPUs' nodes
// and its own devices', and denied every other GPU's and device's; the
// GPUs' nodes come from the NVIDIA driver's minors under /proc.
func TestDeviceNodesForTask(t *testing.T) {
	proc := t.TempDir()
	info := filepath.Join(proc, "driver", "nvidia", "gpus", "0000:07:00.0")
	os.MkdirAll(info, 0o755)
	os.WriteFile(filepath.Join(info, "information"), []byte("GPU UUID: \t GPU-bbb\nDevice Minor: \t 5\n"), 0o644)
	node := &api.Node{
		GPUs: []api.GPU{{ID: "GPU-aaa"}, {ID: "GPU-bbb"}},
		Devices: []api.Device{
			{ID: "f0", Class: "fpga", Paths: []string{"/dev/vfio/31"}},
			{ID: "f1", Class: "fpga", Paths: []string{"/dev/vfio/32"}},
			{ID: "v0", Class: "nic-vf"}, // no device node: nothing to give or deny
		},
	}
	dn := newDeviceNodes(node, "/dev", proc)
	given, denied := dn.forTask([]string{"GPU-bbb"}, []string{"f1"})
	if g := strings.Join(given, ","); g != "/dev/nvidia5,/dev/vfio/32" {
		t.Errorf("given %s", g)
	}
	if d := strings.Join(denied, ","); d != "/dev/nvidia0,/dev/vfio/31" {
		t.Errorf("denied %s", d)
	}
	env := map[string]string{}
	deviceEnv(env, node, []string{"f1", "v0"})
	if env["STRATA_DEVICES_FPGA"] != "f1" || env["STRATA_DEVICES_NIC_VF"] != "v0" {
		t.Errorf("env %v", env)
	}
}

// TestTaskGetsOnlyItsGPUAndDevice runs an agent whose node has two GPUs
// (a fake nvidia-smi) and two FPGAs (its device config), all with fake
// device nodes: an exec task given GPU-b and fpga-1 sees them in its
// environment, may open their nodes (ENXIO: no driver behind them) and
// is refused the others' (EPERM: the devices cgroup).
func TestTaskGetsOnlyItsGPUAndDevice(t *testing.T) {
	needCgroups(t)
	if !cgroup.DeviceControl(cgroup.V1, cgroup.DefaultRoot) {
		t.Skip("needs the cgroup v1 devices controller (v2: docs/devices.md)")
	}
	// Under /var/lib: a task has private /tmp and /var/tmp but sees the
	// rest of the host.
	dev, err := os.MkdirTemp("/var/lib", "strata-agentdev-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(dev) })
	os.Chmod(dev, 0o755)
	var fs unix.Statfs_t
	if err := unix.Statfs(dev, &fs); err == nil && fs.Flags&unix.ST_NODEV != 0 {
		t.Skipf("%s is on a nodev file system: device nodes there cannot be opened", dev)
	}
	for _, n := range []struct {
		name         string
		major, minor uint32
	}{{"nvidia0", 195, 0}, {"nvidia1", 195, 1}, {"fpga0", 240, 0}, {"fpga1", 240, 1}} {
		if err := unix.Mknod(filepath.Join(dev, n.name), unix.S_IFCHR|0o666, int(unix.Mkdev(n.major, n.minor))); err != nil {
			t.Skipf("mknod: %v", err)
		}
	}
	smi := filepath.Join(t.TempDir(), "nvidia-smi")
	os.WriteFile(smi, []byte("#!/bin/sh\necho '0, GPU-a, NVIDIA A100-SXM4-80GB, 81920, 00000000:07:00.0'\necho '1, GPU-b, NVIDIA A100-SXM4-80GB, 81920, 00000000:08:00.0'\n"), 0o755)
	devCfg := filepath.Join(t.TempDir(), "devices.yaml")
	os.WriteFile(devCfg, []byte("ignoreBuiltin: true\ndevices:\n"+
		"  - {id: fpga-0, class: fpga, numa: 0, paths: ["+dev+"/fpga0]}\n"+
		"  - {id: fpga-1, class: fpga, numa: 0, paths: ["+dev+"/fpga1]}\n"), 0o644)

	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) {
		c.GPUCommand, c.DevRoot, c.DevicesConfig = []string{smi}, dev, devCfg
		c.SysRoot = t.TempDir() // no PCI devices: only the configured ones
	})
	if n := ag.Node(); len(n.GPUs) != 2 || len(n.Devices) != 2 {
		t.Fatalf("node fingerprinted %d GPUs and %d devices, want 2 and 2", len(n.GPUs), len(n.Devices))
	}
	alloc := newAlloc(ag.NodeID()).task("t", api.Resources{CPUMilli: 100, MemoryBytes: 32 << 20, GPUs: 1}, "sh", "-c", `
		echo "cuda=$CUDA_VISIBLE_DEVICES nvidia=$NVIDIA_VISIBLE_DEVICES fpga=$STRATA_DEVICES_FPGA"
		for n in nvidia0 nvidia1 fpga0 fpga1; do
			if (exec 3<"$DEV/$n") 2>/dev/null; then echo "$n=open"
			else echo "$n=$( (exec 3<"$DEV/$n") 2>&1 | sed 's/.*: //')"; fi
		done`).
		last(func(tk *api.Task) {
			tk.Env = map[string]string{"DEV": dev}
			tk.Devices = []api.DeviceRequest{{Class: "fpga", Count: 1}}
		}).build()
	alloc.Assignment.GPUs, alloc.Assignment.Devices = []string{"GPU-b"}, []string{"fpga-1"}
	srv.put(alloc)
	waitTask(t, srv, alloc.ID, "t", "task done", func(_ *api.AllocUpdate, ts *api.TaskState) bool { return ts.State == api.TaskDead })
	out := readTrim(t, filepath.Join(ag.cfg.DataDir, "allocs", alloc.ID, "t", "stdout.log"))
	want := "cuda=GPU-b nvidia=GPU-b fpga=fpga-1\n" +
		"nvidia0=Operation not permitted\nnvidia1=No such device or address\n" +
		"fpga0=Operation not permitted\nfpga1=No such device or address"
	if out != want {
		t.Fatalf("task saw\n%s\nwant\n%s", out, want)
	}
}

// TestTaskWithAGoneDeviceFailsWithTheReason: a device whose node has
// disappeared from the host is not handed to a task as if it were there:
// the task fails to start and says which device is gone.
func TestTaskWithAGoneDeviceFailsWithTheReason(t *testing.T) {
	needCgroups(t)
	gone := filepath.Join(t.TempDir(), "fpga0") // never created
	devCfg := filepath.Join(t.TempDir(), "devices.yaml")
	os.WriteFile(devCfg, []byte("ignoreBuiltin: true\ndevices:\n  - {id: fpga-0, class: fpga, paths: ["+gone+"]}\n"), 0o644)
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) {
		c.DevicesConfig, c.SysRoot = devCfg, t.TempDir()
	})
	alloc := newAlloc(ag.NodeID()).task("t", api.Resources{CPUMilli: 100, MemoryBytes: 32 << 20}, "true").
		last(func(tk *api.Task) { tk.Devices = []api.DeviceRequest{{Class: "fpga", Count: 1}} }).build()
	alloc.Assignment.Devices = []string{"fpga-0"}
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "t", "task failed", func(_ *api.AllocUpdate, ts *api.TaskState) bool { return ts.State == api.TaskDead })
	if up.ClientStatus != api.AllocFailed || !strings.Contains(up.ClientReason, "device fpga-0 is gone") {
		t.Fatalf("alloc %s %q, want failed saying the device is gone", up.ClientStatus, up.ClientReason)
	}
}
