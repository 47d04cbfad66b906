package trace

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Columns of the openb node list.
var openbNodeColumns = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}

// Columns every openb pod list has; the time, spec, qos and phase columns
// are optional (the multigpuNN lists have only these five).
var openbPodColumns = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}

// ReadOpenbNodes parses an openb node list (sn,cpu_milli,memory_mib,gpu,model).
// name is used in error messages only.
func ReadOpenbNodes(name string, r io.Reader) ([]Node, error) {
	t, err := newTable(name, r)
	if err != nil {
		return nil, err
	}
	if err := t.require(openbNodeColumns...); err != nil {
		return nil, err
	}
	var nodes []Node
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nodes, nil
		}
		n := Node{Name: t.str("sn"), GPUModel: t.str("model")}
		if n.Name == "" {
			return nil, t.errf("sn", "empty node name")
		}
		if n.CPUMilli, err = t.int64("cpu_milli", 0); err != nil {
			return nil, err
		}
		if n.MemoryMiB, err = t.int64("memory_mib", 0); err != nil {
			return nil, err
		}
		gpus, err := t.int64("gpu", 0)
		if err != nil {
			return nil, err
		}
		if gpus > MaxGPUsPerNode {
			return nil, t.errf("gpu", "%d GPUs on one node; at most %d are modelled", gpus, MaxGPUsPerNode)
		}
		n.GPUs = int(gpus)
		if n.GPUs > 0 && n.GPUModel == "" {
			return nil, t.errf("model", "node has %d GPUs but no model", n.GPUs)
		}
		nodes = append(nodes, n)
	}
}

// MaxGPUsPerNode bounds the GPUs of one node: the simulator tracks a node's
// GPUs in a 64-bit set.
const MaxGPUsPerNode = 64

// ReadOpenbPods parses any openb pod list. The default, cpuNNN, gpushareNN and
// gpuspecNN lists carry name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,
// qos,pod_phase,creation_time,deletion_time,scheduled_time; the multigpuNN
// lists carry only the first five. Missing times become Absent, a missing
// gpu_spec means any model. name is used in error messages only.
func ReadOpenbPods(name string, r io.Reader) ([]Pod, error) {
	t, err := newTable(name, r)
	if err != nil {
		return nil, err
	}
	if err := t.require(openbPodColumns...); err != nil {
		return nil, err
	}
	var pods []Pod
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return pods, nil
		}
		p := Pod{Name: t.str("name"), QoS: t.str("qos"), Phase: t.str("pod_phase")}
		if p.Name == "" {
			return nil, t.errf("name", "empty pod name")
		}
		if p.CPUMilli, err = t.int64("cpu_milli", 0); err != nil {
			return nil, err
		}
		if p.MemoryMiB, err = t.int64("memory_mib", 0); err != nil {
			return nil, err
		}
		num, err := t.int64("num_gpu", 0)
		if err != nil {
			return nil, err
		}
		if num > MaxGPUsPerNode {
			return nil, t.errf("num_gpu", "%d GPUs exceeds %d", num, MaxGPUsPerNode)
		}
		p.NumGPU = int(num)
		if p.GPUMilli, err = t.int64("gpu_milli", 0); err != nil {
			return nil, err
		}
		if err := checkGPURequest(&p); err != nil {
			return nil, t.errf("gpu_milli", "%v", err)
		}
		if spec := t.str("gpu_spec"); spec != "" {
			p.GPUSpec = splitSpec(spec)
		}
		for _, c := range []struct {
			col string
			dst *int64
		}{{"creation_time", &p.Creation}, {"deletion_time", &p.Deletion}, {"scheduled_time", &p.Scheduled}} {
			if *c.dst, err = t.int64(c.col, Absent); err != nil {
				return nil, err
			}
		}
		pods = append(pods, p)
	}
}

// checkGPURequest enforces the openb GPU request convention.
func checkGPURequest(p *Pod) error {
	switch {
	case p.NumGPU < 0 || p.GPUMilli < 0:
		return fmt.Errorf("negative GPU request")
	case p.NumGPU == 0 && p.GPUMilli != 0:
		return fmt.Errorf("gpu_milli %d without num_gpu", p.GPUMilli)
	case p.NumGPU > 0 && p.GPUMilli == 0:
		// A count without a share means whole GPUs.
		p.GPUMilli = MilliPerGPU
	case p.NumGPU > 1 && p.GPUMilli != MilliPerGPU:
		return fmt.Errorf("multi-GPU pod (%d GPUs) must take whole GPUs, got gpu_milli %d", p.NumGPU, p.GPUMilli)
	case p.GPUMilli > MilliPerGPU:
		return fmt.Errorf("gpu_milli %d exceeds one GPU", p.GPUMilli)
	}
	return nil
}

// splitSpec splits a "|"-separated model list, dropping empty and repeated
// entries (the trace has "V100M16|V100M32|V100M32").
func splitSpec(spec string) []string {
	var out []string
	for _, m := range strings.Split(spec, "|") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || o == m
		}
		if !dup {
			out = append(out, m)
		}
	}
	return out
}

// LoadOpenbNodes reads an openb node list file.
func LoadOpenbNodes(path string) ([]Node, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open node list: %w", err)
	}
	defer f.Close()
	return ReadOpenbNodes(filepath.Base(path), f)
}

// LoadOpenbPods reads an openb pod list file.
func LoadOpenbPods(path string) ([]Pod, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open pod list: %w", err)
	}
	defer f.Close()
	return ReadOpenbPods(filepath.Base(path), f)
}
