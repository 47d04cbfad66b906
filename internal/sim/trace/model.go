package trace

// MilliPerGPU is the number of milli-GPU in one whole GPU.
const MilliPerGPU = 1000

// Absent marks a time the trace does not record (openb scheduled_time of a
// pod that never ran, multigpu lists that carry no times at all).
const Absent int64 = -1

// Node is one machine as a trace declares it.
type Node struct {
	Name      string            `json:"name"`
	CPUMilli  int64             `json:"cpuMilli"`
	MemoryMiB int64             `json:"memoryMiB"`
	GPUs      int               `json:"gpus,omitempty"`
	GPUModel  string            `json:"gpuModel,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"` // cold path only: never read while placing
}

// Pod is one task as a trace declares it. Times are in seconds from the
// start of the trace; Absent (-1) where the trace has none.
//
// GPU requests follow the openb convention: NumGPU GPUs of GPUMilli each.
// A GPU-sharing pod has NumGPU == 1 and 0 < GPUMilli < 1000; a pod that
// wants whole GPUs has GPUMilli == 1000.
type Pod struct {
	Name      string   `json:"name"`
	CPUMilli  int64    `json:"cpuMilli"`
	MemoryMiB int64    `json:"memoryMiB"`
	NumGPU    int      `json:"numGPU,omitempty"`
	GPUMilli  int64    `json:"gpuMilli,omitempty"`
	GPUSpec   []string `json:"gpuSpec,omitempty"` // acceptable GPU models; empty means any
	QoS       string   `json:"qos,omitempty"`
	Phase     string   `json:"phase,omitempty"`
	Creation  int64    `json:"creation"`
	Deletion  int64    `json:"deletion"`
	Scheduled int64    `json:"scheduled"`
	Priority  int      `json:"priority,omitempty"`

	// Job groups the pods of one job (the Google trace's job id); 0: none.
	Job int64 `json:"job,omitempty"`
	// DistinctNode is the Google trace's different-machine constraint:
	// the pod never shares a machine with another running pod of its Job
	// (nor does another pod of the Job join it).
	DistinctNode bool `json:"distinctNode,omitempty"`
	// RunsFor says the pod ends on its own after running Runtime seconds
	// (a Google task that finished or failed after the trace scheduled
	// it): replay ends it that long after it starts, wherever the
	// simulator started it. Otherwise it ends at Deletion (a kill, an
	// eviction, or a time the trace gives as such).
	RunsFor bool  `json:"runsFor,omitempty"`
	Runtime int64 `json:"runtime,omitempty"`
	// CarriedOver marks a pod the trace shows already pending or running
	// when its window begins (its first event is not a submission): it
	// is created at the window's start and kept out of pending times.
	CarriedOver bool `json:"carriedOver,omitempty"`
	// Updates change the pod's request while it lives, in time order.
	Updates []Update `json:"updates,omitempty"`
}

// Update is a change of a pod's request (a Google UPDATE_PENDING or
// UPDATE_RUNNING event) at Time.
type Update struct {
	Time      int64 `json:"time"`
	CPUMilli  int64 `json:"cpuMilli"`
	MemoryMiB int64 `json:"memoryMiB"`
	Priority  int   `json:"priority,omitempty"`
}

// GPURequestMilli is the pod's total GPU request in milli-GPU: GPUMilli for a
// GPU-sharing pod, NumGPU*1000 for a pod that takes whole GPUs.
func (p *Pod) GPURequestMilli() int64 {
	if p.NumGPU <= 0 {
		return 0
	}
	if p.IsShare() {
		return p.GPUMilli
	}
	return int64(p.NumGPU) * MilliPerGPU
}

// IsShare reports whether the pod asks for a fraction of a single GPU.
func (p *Pod) IsShare() bool {
	return p.NumGPU == 1 && p.GPUMilli > 0 && p.GPUMilli < MilliPerGPU
}

// PerGPUMilli is what the pod takes from each GPU it is given: GPUMilli for a
// sharing pod, 1000 otherwise (0 for a pod without GPUs).
func (p *Pod) PerGPUMilli() int64 {
	switch {
	case p.NumGPU <= 0:
		return 0
	case p.IsShare():
		return p.GPUMilli
	default:
		return MilliPerGPU
	}
}

// AcceptsModel reports whether the pod may run on a GPU of the given model.
func (p *Pod) AcceptsModel(model string) bool {
	if len(p.GPUSpec) == 0 {
		return true
	}
	for _, m := range p.GPUSpec {
		if m == model {
			return true
		}
	}
	return false
}

// NodeEventKind says what happened to a machine.
type NodeEventKind uint8

// Node event kinds, in the Google 2011 machine_events numbering.
const (
	NodeAdd    NodeEventKind = 0
	NodeRemove NodeEventKind = 1
	NodeUpdate NodeEventKind = 2
)

func (k NodeEventKind) String() string {
	switch k {
	case NodeAdd:
		return "add"
	case NodeRemove:
		return "remove"
	case NodeUpdate:
		return "update"
	}
	return "unknown"
}

// NodeEvent is a change to the machine set at a point in trace time. Node
// indexes Trace.Nodes; CPUMilli and MemoryMiB are the capacities after an
// add or update.
type NodeEvent struct {
	Time      int64         `json:"time"`
	Node      int           `json:"node"`
	Kind      NodeEventKind `json:"kind"`
	CPUMilli  int64         `json:"cpuMilli,omitempty"`
	MemoryMiB int64         `json:"memoryMiB,omitempty"`
}

// Trace is everything a loader produced. NodeEvents is sorted by time and is
// empty for traces with a fixed machine set.
type Trace struct {
	Nodes      []Node      `json:"nodes"`
	Pods       []Pod       `json:"pods"`
	NodeEvents []NodeEvent `json:"nodeEvents,omitempty"`
}

// GPUCapacityMilli is the sum of all nodes' GPUs in milli-GPU.
func GPUCapacityMilli(nodes []Node) int64 {
	var total int64
	for i := range nodes {
		total += int64(nodes[i].GPUs) * MilliPerGPU
	}
	return total
}
