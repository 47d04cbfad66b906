package cli

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestDevicesSummary(t *testing.T) {
	n := &api.Node{Devices: []api.Device{
		{ID: "a", Class: "fpga"}, {ID: "b", Class: "nic-vf"}, {ID: "c", Class: "fpga"},
	}}
	if got := devicesSummary(n); got != "fpga:2,nic-vf:1" {
		t.Fatalf("devicesSummary = %q", got)
	}
	if got := devicesSummary(&api.Node{}); got != "-" {
		t.Fatalf("no devices: %q", got)
	}
}

func TestAllocStatusShowsHardware(t *testing.T) {
	var buf bytes.Buffer
	printAllocStatus(&buf, &api.Allocation{ID: "a1", Assignment: api.Assignment{
		CPUs: []int{2, 3}, NUMANode: 1, GPUs: []string{"GPU-b"}, Devices: []string{"0000:3b:00.0", "0000:5e:00.2"},
	}})
	for _, want := range []string{"Cores:     2 3 (NUMA node 1)\n", "GPUs:      GPU-b\n", "Devices:   0000:3b:00.0,0000:5e:00.2\n"} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("alloc-status lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestAgentDevicesConfig: the device config comes from the flag, else
// from the agent's config file.
func TestAgentDevicesConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "agent.yaml")
	os.WriteFile(file, []byte("devicesConfig: /etc/strata/devices.yaml\ninsecure-plaintext: true\n"), 0o644)
	for _, tc := range []struct{ flag, want string }{
		{"", "/etc/strata/devices.yaml"},
		{"/tmp/d.yaml", "/tmp/d.yaml"},
	} {
		args := []string{"--config", file}
		if tc.flag != "" {
			args = append(args, "--devices-config", tc.flag)
		}
		f := agentFlagsFrom(t, args...)
		cfg, err := f.agentConfig(filepath.Join(dir, "agent"), []string{"127.0.0.1:4680"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.DevicesConfig != tc.want {
			t.Errorf("flag %q: DevicesConfig = %q, want %q", tc.flag, cfg.DevicesConfig, tc.want)
		}
	}
}
