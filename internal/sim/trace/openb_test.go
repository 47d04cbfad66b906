package trace_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/sim/simtest"
	"github.com/strata-dev/strata/internal/sim/trace"
)

func TestOpenbNodeLists(t *testing.T) {
	tests := []struct {
		file         string
		nodes, gpus  int
		gpuNodes     int
		firstCPU     int64
		firstGPUType string
	}{
		{"openb_node_list_gpu_node.csv", 1213, 6212, 1213, 64000, "P100"},
		{"openb_node_list_all_node.csv", 1523, 6212, 1213, 32000, ""},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			nodes, err := trace.LoadOpenbNodes(simtest.Openb(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			gpus, gpuNodes := 0, 0
			for _, n := range nodes {
				gpus += n.GPUs
				if n.GPUs > 0 {
					gpuNodes++
				}
			}
			if len(nodes) != tc.nodes || gpus != tc.gpus || gpuNodes != tc.gpuNodes {
				t.Fatalf("got %d nodes, %d GPUs, %d GPU nodes; want %d, %d, %d", len(nodes), gpus, gpuNodes, tc.nodes, tc.gpus, tc.gpuNodes)
			}
			if nodes[0].CPUMilli != tc.firstCPU || nodes[0].GPUModel != tc.firstGPUType {
				t.Fatalf("first node = %+v", nodes[0])
			}
			if got := trace.GPUCapacityMilli(nodes); got != int64(tc.gpus)*1000 {
				t.Fatalf("GPUCapacityMilli = %d", got)
			}
		})
	}
}

func TestOpenbPodLists(t *testing.T) {
	tests := []struct {
		file     string
		pods     int
		hasTimes bool
		hasSpec  bool
	}{
		{"openb_pod_list_default.csv", 8152, true, false},
		{"openb_pod_list_cpu050.csv", 7439, true, false},
		{"openb_pod_list_cpu100.csv", 7853, true, false},
		{"openb_pod_list_cpu200.csv", 8832, true, false},
		{"openb_pod_list_gpushare40.csv", 8152, true, false},
		{"openb_pod_list_gpushare60.csv", 8152, true, false},
		{"openb_pod_list_gpushare80.csv", 8152, true, false},
		{"openb_pod_list_gpuspec10.csv", 8152, true, true},
		{"openb_pod_list_gpuspec20.csv", 8152, true, true},
		{"openb_pod_list_multigpu20.csv", 8324, false, false},
		{"openb_pod_list_multigpu30.csv", 8508, false, false},
		{"openb_pod_list_multigpu40.csv", 8746, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			pods, err := trace.LoadOpenbPods(simtest.Openb(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(pods) != tc.pods {
				t.Fatalf("got %d pods, want %d", len(pods), tc.pods)
			}
			withTimes, withSpec := 0, 0
			for i := range pods {
				p := &pods[i]
				if p.Creation != trace.Absent {
					withTimes++
				}
				if len(p.GPUSpec) > 0 {
					withSpec++
				}
				if p.NumGPU > 1 && p.GPUMilli != 1000 {
					t.Fatalf("%s: multi-GPU pod with gpu_milli %d", p.Name, p.GPUMilli)
				}
			}
			if (withTimes == len(pods)) != tc.hasTimes || (withTimes == 0) == tc.hasTimes {
				t.Fatalf("%d of %d pods have times; want all=%v", withTimes, len(pods), tc.hasTimes)
			}
			if (withSpec > 0) != tc.hasSpec {
				t.Fatalf("%d pods with gpu_spec; want some=%v", withSpec, tc.hasSpec)
			}
		})
	}
}

func TestOpenbDefaultFirstPods(t *testing.T) {
	pods, err := trace.LoadOpenbPods(simtest.Openb(t, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := trace.Pod{Name: "openb-pod-0001", CPUMilli: 6000, MemoryMiB: 12288, NumGPU: 1, GPUMilli: 460,
		QoS: "LS", Phase: "Running", Creation: 427061, Deletion: 12902960, Scheduled: 427061}
	if got := pods[1]; got.Name != want.Name || got.CPUMilli != want.CPUMilli || got.GPUMilli != want.GPUMilli ||
		got.Creation != want.Creation || got.Deletion != want.Deletion || got.Scheduled != want.Scheduled || got.QoS != want.QoS {
		t.Fatalf("pods[1] = %+v, want %+v", got, want)
	}
	if pods[1].GPURequestMilli() != 460 || pods[0].GPURequestMilli() != 1000 {
		t.Fatalf("GPU requests %d, %d", pods[1].GPURequestMilli(), pods[0].GPURequestMilli())
	}
}

func TestOpenbGPUSpecSplit(t *testing.T) {
	in := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np,1000,1,1,500,V100M16|V100M32|V100M32\n"
	pods, err := trace.ReadOpenbPods("x.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(pods[0].GPUSpec, ","); got != "V100M16,V100M32" {
		t.Fatalf("spec = %q", got)
	}
	if !pods[0].AcceptsModel("V100M32") || pods[0].AcceptsModel("T4") {
		t.Fatal("AcceptsModel wrong")
	}
	if pods[0].Creation != trace.Absent {
		t.Fatalf("missing creation column should be Absent, got %d", pods[0].Creation)
	}
}

func TestOpenbErrorsNameFileLineColumn(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bad int", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,0,0\np1,abc,1,0,0\n", "pods.csv:3:cpu_milli: not an integer"},
		{"missing column", "name,cpu_milli,num_gpu,gpu_milli\n", "pods.csv:1:memory_mib: missing required column"},
		{"share on many", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,2,500\n", "pods.csv:2:gpu_milli: multi-GPU pod"},
		{"negative", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,-1,1,0,0\n", "pods.csv:2:cpu_milli: negative"},
		{"reordered columns load", "gpu_milli,num_gpu,memory_mib,cpu_milli,name\n500,1,2,3,p0\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := trace.ReadOpenbPods("pods.csv", strings.NewReader(tc.in))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *trace.ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ParseError containing %q", err, tc.want)
			}
		})
	}
	_, err := trace.ReadOpenbNodes("nodes.csv", strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,2,\n"))
	if err == nil || !strings.Contains(err.Error(), "nodes.csv:2:model") {
		t.Fatalf("node without model: err = %v", err)
	}
}
