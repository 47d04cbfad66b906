package fingerprint

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/strata-dev/strata/api"
)

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"0-1\n", []int{0, 1}, false},
		{"0-3,8,10-11", []int{0, 1, 2, 3, 8, 10, 11}, false},
		{"5", []int{5}, false},
		{"", nil, false},
		{"3-1", nil, true},
		{"a-b", nil, true},
	} {
		got, err := ParseCPUList(tc.in)
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v, err=%v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestFingerprintTwoSocketFixture(t *testing.T) {
	sys, proc := t.TempDir(), t.TempDir()
	write(t, sys, "devices/system/node/node0/cpulist", "0-3,8-11\n")
	write(t, sys, "devices/system/node/node0/meminfo", "Node 0 MemTotal:       65536 kB\nNode 0 MemFree:  100 kB\n")
	write(t, sys, "devices/system/node/node1/cpulist", "4-7,12-15\n")
	write(t, sys, "devices/system/node/node1/meminfo", "Node 1 MemTotal:       32768 kB\n")
	write(t, sys, "devices/system/node/possible", "0-1\n") // not a node directory
	write(t, sys, "bus/pci/devices/0000:3b:00.0/numa_node", "1\n")
	write(t, proc, "meminfo", "MemTotal:        98304 kB\nMemFree:  1 kB\n")
	fakeSMI := filepath.Join(t.TempDir(), "nvidia-smi")
	write(t, filepath.Dir(fakeSMI), "nvidia-smi", "#!/bin/sh\necho '0, GPU-aaaa, NVIDIA A100-SXM4-80GB, 81920, 00000000:3B:00.0'\n")
	os.Chmod(fakeSMI, 0o755)

	res, err := Fingerprint(context.Background(), Options{SysRoot: sys, ProcRoot: proc, DataDir: t.TempDir(), GPUCommand: []string{fakeSMI}})
	if err != nil {
		t.Fatal(err)
	}
	wantNUMA := []api.NUMANode{
		{ID: 0, CPUs: []int{0, 1, 2, 3, 8, 9, 10, 11}, MemoryBytes: 65536 << 10},
		{ID: 1, CPUs: []int{4, 5, 6, 7, 12, 13, 14, 15}, MemoryBytes: 32768 << 10},
	}
	if !reflect.DeepEqual(res.NUMA, wantNUMA) {
		t.Errorf("NUMA = %+v", res.NUMA)
	}
	if res.CPUs != 16 || res.MemoryBytes != 98304<<10 || res.DiskBytes <= 0 {
		t.Errorf("cpus %d memory %d disk %d", res.CPUs, res.MemoryBytes, res.DiskBytes)
	}
	wantGPU := []api.GPU{{ID: "GPU-aaaa", Model: "NVIDIA A100-SXM4-80GB", MemoryBytes: 81920 << 20, NUMA: 1}}
	if !reflect.DeepEqual(res.GPUs, wantGPU) {
		t.Errorf("GPUs = %+v", res.GPUs)
	}
}

func TestNoNUMADirAndNoNvidiaSMI(t *testing.T) {
	proc := t.TempDir()
	write(t, proc, "meminfo", "MemTotal: 1024 kB\n")
	res, err := Fingerprint(context.Background(), Options{SysRoot: t.TempDir(), ProcRoot: proc,
		GPUCommand: []string{"/nonexistent/nvidia-smi"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.NUMA != nil || res.GPUs != nil || res.CPUs == 0 {
		t.Errorf("got %+v", res)
	}
}

func TestParseNvidiaSMI(t *testing.T) {
	out := "0, GPU-1111, NVIDIA H100 80GB HBM3, 81559, 00000000:18:00.0\n" +
		"1, GPU-2222, NVIDIA H100 80GB HBM3, 81559, 00000000:2A:00.0\n\n"
	got, err := ParseNvidiaSMI([]byte(out), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := []api.GPU{
		{ID: "GPU-1111", Model: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20, NUMA: -1},
		{ID: "GPU-2222", Model: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20, NUMA: -1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	if _, err := ParseNvidiaSMI([]byte("0, GPU-1, A100\n"), ""); err == nil {
		t.Error("short line accepted")
	}
	if _, err := ParseNvidiaSMI([]byte("0, GPU-1, A100, lots, 0:0:0.0\n"), ""); err == nil {
		t.Error("bad memory accepted")
	}
}

func TestThisHost(t *testing.T) {
	res, err := Fingerprint(context.Background(), Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.CPUs < 1 || res.MemoryBytes <= 0 {
		t.Errorf("host fingerprint %+v", res)
	}
}
