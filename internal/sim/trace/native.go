package trace

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// ParseNative decodes the native scenario format, YAML or JSON:
//
//	nodes:
//	- {name: n0, cpuMilli: 32000, memoryMiB: 131072, gpus: 4, gpuModel: T4}
//	pods:
//	- {name: p0, cpuMilli: 4000, memoryMiB: 8192, numGPU: 1, gpuMilli: 500, creation: 0, deletion: 60}
//	nodeEvents:
//	- {time: 30, node: 0, kind: 1}
//
// Omitted times mean absent (-1), except creation, which defaults to 0.
// Unknown fields are rejected so that a typo does not silently vanish.
func ParseNative(name string, data []byte) (*Trace, error) {
	var raw struct {
		Nodes      []Node      `json:"nodes"`
		Pods       []nativePod `json:"pods"`
		NodeEvents []NodeEvent `json:"nodeEvents"`
	}
	if err := yaml.UnmarshalStrict(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	tr := &Trace{Nodes: raw.Nodes, NodeEvents: raw.NodeEvents}
	for i, n := range tr.Nodes {
		if n.Name == "" || n.CPUMilli < 0 || n.MemoryMiB < 0 || n.GPUs < 0 || n.GPUs > MaxGPUsPerNode {
			return nil, fmt.Errorf("%s: nodes[%d]: need a name, non-negative capacities and at most %d GPUs", name, i, MaxGPUsPerNode)
		}
	}
	for i, np := range raw.Pods {
		p := np.Pod
		p.Creation, p.Deletion, p.Scheduled = orDefault(np.Creation, 0), orDefault(np.Deletion, Absent), orDefault(np.Scheduled, Absent)
		if p.Name == "" || p.CPUMilli < 0 || p.MemoryMiB < 0 {
			return nil, fmt.Errorf("%s: pods[%d]: need a name and non-negative requests", name, i)
		}
		if err := checkGPURequest(&p); err != nil {
			return nil, fmt.Errorf("%s: pods[%d].gpuMilli: %w", name, i, err)
		}
		tr.Pods = append(tr.Pods, p)
	}
	for i, e := range tr.NodeEvents {
		if e.Node < 0 || e.Node >= len(tr.Nodes) || e.Kind > NodeUpdate {
			return nil, fmt.Errorf("%s: nodeEvents[%d]: bad node %d or kind %d", name, i, e.Node, e.Kind)
		}
		if i > 0 && e.Time < tr.NodeEvents[i-1].Time {
			return nil, fmt.Errorf("%s: nodeEvents[%d].time: events must be sorted by time", name, i)
		}
	}
	return tr, nil
}

// nativePod distinguishes an omitted time from zero.
type nativePod struct {
	Pod
	Creation  *int64 `json:"creation"`
	Deletion  *int64 `json:"deletion"`
	Scheduled *int64 `json:"scheduled"`
}

func orDefault(v *int64, def int64) int64 {
	if v == nil {
		return def
	}
	return *v
}

// LoadNative reads a native scenario file.
func LoadNative(path string) (*Trace, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return ParseNative(filepath.Base(path), data)
}
