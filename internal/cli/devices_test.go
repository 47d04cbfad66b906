package cli

import (
	"bytes"
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
