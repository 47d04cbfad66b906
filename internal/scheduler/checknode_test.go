package scheduler

import (
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestCheckNode(t *testing.T) {
	box := gpuBox().n
	pinned := func(id string, cores ...int) *api.Allocation {
		a := runningOn(id, "n1", api.Resources{CPUMilli: int64(len(cores)) * 1000, MemoryBytes: 1 << 30}, api.Assignment{CPUs: cores, NUMANode: 0})
		a.TaskGroup = taskGroup("g").exclusive().g
		return a
	}
	whole := func(id string, gpus ...string) *api.Allocation {
		return runningOn(id, "n1", api.Resources{GPUs: int64(len(gpus))}, api.Assignment{GPUs: gpus, NUMANode: -1})
	}
	share := func(id, gpu string, milli int64) *api.Allocation {
		return runningOn(id, "n1", api.Resources{GPUMilli: milli}, api.Assignment{GPUs: []string{gpu}, GPUMilli: milli, NUMANode: -1})
	}
	plain := func(id string, cpu int64, mem string) *api.Allocation {
		return runningOn(id, "n1", api.Resources{CPUMilli: cpu, MemoryBytes: bytesOf(mem)}, api.Assignment{NUMANode: -1})
	}
	terminal := plain("done", 16000, "64Gi")
	terminal.ClientStatus = api.AllocComplete

	tests := []struct {
		name     string
		node     *api.Node
		existing []*api.Allocation
		stopping map[string]bool
		place    []*api.Allocation
		want     string // "" = ok
	}{
		{"fits", box, []*api.Allocation{plain("a", 8000, "32Gi")}, nil, []*api.Allocation{plain("b", 8000, "32Gi")}, ""},
		{"cpu overcommit", box, []*api.Allocation{plain("a", 8000, "1Gi")}, nil, []*api.Allocation{plain("b", 8001, "1Gi")}, "insufficient cpu"},
		{"memory overcommit", box, nil, nil, []*api.Allocation{plain("b", 1, "65Gi")}, "insufficient memory"},
		{"stopping frees room", box, []*api.Allocation{plain("a", 16000, "1Gi")}, map[string]bool{"a": true}, []*api.Allocation{plain("b", 16000, "1Gi")}, ""},
		{"terminal allocations hold nothing", box, []*api.Allocation{terminal}, nil, []*api.Allocation{plain("b", 16000, "64Gi")}, ""},
		{"not ready", gpuBox().status(api.NodeDown).n, nil, nil, []*api.Allocation{plain("b", 1, "1Gi")}, "node not ready"},
		{"missing node", nil, nil, nil, []*api.Allocation{plain("b", 1, "1Gi")}, "node not found"},
		{"stops only always fit", gpuBox().status(api.NodeDown).n, []*api.Allocation{plain("a", 1, "1Gi")}, map[string]bool{"a": true}, nil, ""},
		{"conflicts committed before are not judged", box, []*api.Allocation{pinned("a", 1), pinned("a2", 1)}, nil, []*api.Allocation{plain("b", 1000, "1Gi")}, ""},
		{"conflicts committed before are not judged, pinned", box, []*api.Allocation{pinned("a", 1), pinned("a2", 1)}, nil, []*api.Allocation{pinned("b", 2)}, ""},
		{"core taken", box, []*api.Allocation{pinned("a", 0, 1)}, nil, []*api.Allocation{pinned("b", 1, 2)}, "cpu 1 assigned twice"},
		{"core taken within the plan", box, nil, nil, []*api.Allocation{pinned("a", 3), pinned("b", 3)}, "cpu 3 assigned twice"},
		{"stopping frees a core", box, []*api.Allocation{pinned("a", 0, 1)}, map[string]bool{"a": true}, []*api.Allocation{pinned("b", 1, 2)}, ""},
		{"unknown core", box, nil, nil, []*api.Allocation{pinned("b", 99)}, "cpu 99 not on node"},
		{"core off its numa node", box, nil, nil, []*api.Allocation{pinned("b", 9)}, "cpu 9 not on numa node 0"},
		{"numa memory", box, []*api.Allocation{pinned("a", 0)}, nil, []*api.Allocation{func() *api.Allocation {
			b := pinned("b", 1)
			b.Resources.MemoryBytes = 32 << 30
			return b
		}()}, "numa node 0 memory overcommitted"},
		{"too few cores", box, nil, nil, []*api.Allocation{func() *api.Allocation {
			b := pinned("b", 1)
			b.Resources.CPUMilli = 2000
			return b
		}()}, "alloc b: assigned 1 cores for 2000 millicores"},
		{"whole gpu taken", box, []*api.Allocation{whole("a", "0")}, nil, []*api.Allocation{whole("b", "0")}, "gpu 0 assigned twice"},
		{"whole gpu on a shared one", box, []*api.Allocation{share("a", "1", 100)}, nil, []*api.Allocation{whole("b", "1")}, "gpu 1 assigned twice"},
		{"share on a whole gpu", box, []*api.Allocation{whole("a", "0")}, nil, []*api.Allocation{share("b", "0", 100)}, "gpu 0 assigned whole and shared"},
		{"shares over 1000", box, []*api.Allocation{share("a", "2", 600)}, nil, []*api.Allocation{share("b", "2", 500)}, "gpu 2 shared milli 1100 > 1000"},
		{"shares up to 1000", box, []*api.Allocation{share("a", "2", 600)}, nil, []*api.Allocation{share("b", "2", 400)}, ""},
		{"unknown gpu", box, nil, nil, []*api.Allocation{whole("b", "7")}, "gpu 7 not on node"},
		{"gpu count mismatch", box, nil, nil, []*api.Allocation{func() *api.Allocation {
			b := whole("b", "0")
			b.Resources.GPUs = 2
			return b
		}()}, "alloc b: assigned 1 gpus, want 2"},
		{"gpu aggregate", func() *api.Node {
			n := gpuBox().n
			n.Capacity.GPUs = 3 // fingerprinted four, offers three
			return n
		}(), []*api.Allocation{whole("a", "0", "1", "2")}, nil, []*api.Allocation{whole("b", "3")}, "insufficient gpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, reason := CheckNode(tt.node, tt.existing, tt.stopping, tt.place)
			mustEqual(t, "reason", reason, tt.want)
			mustEqual(t, "ok", ok, tt.want == "")
		})
	}
}
