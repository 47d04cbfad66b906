package api

// Resources is a vector of schedulable quantities. Every dimension is an
// integer in its smallest unit so that arithmetic is exact and comparable.
type Resources struct {
	CPUMilli    int64 `json:"cpuMilli,omitempty"`    // CPU in millicores (1000 = one core)
	MemoryBytes int64 `json:"memoryBytes,omitempty"` // RAM in bytes
	DiskBytes   int64 `json:"diskBytes,omitempty"`   // local disk in bytes
	GPUs        int64 `json:"gpus,omitempty"`        // whole GPUs
	GPUMilli    int64 `json:"gpuMilli,omitempty"`    // a fractional share of one GPU, 1..999 (GPU sharing)
	NetMbps     int64 `json:"netMbps,omitempty"`     // NIC bandwidth in megabits per second
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	return Resources{
		CPUMilli:    r.CPUMilli + o.CPUMilli,
		MemoryBytes: r.MemoryBytes + o.MemoryBytes,
		DiskBytes:   r.DiskBytes + o.DiskBytes,
		GPUs:        r.GPUs + o.GPUs,
		GPUMilli:    r.GPUMilli + o.GPUMilli,
		NetMbps:     r.NetMbps + o.NetMbps,
	}
}

// Sub returns r - o.
func (r Resources) Sub(o Resources) Resources {
	return Resources{
		CPUMilli:    r.CPUMilli - o.CPUMilli,
		MemoryBytes: r.MemoryBytes - o.MemoryBytes,
		DiskBytes:   r.DiskBytes - o.DiskBytes,
		GPUs:        r.GPUs - o.GPUs,
		GPUMilli:    r.GPUMilli - o.GPUMilli,
		NetMbps:     r.NetMbps - o.NetMbps,
	}
}

// Exceeds reports the first dimension in which r is larger than limit, or ""
// when r fits within limit in every dimension. GPUMilli is not compared here:
// fractional GPU shares are checked per physical GPU by the scheduler.
func (r Resources) Exceeds(limit Resources) string {
	switch {
	case r.CPUMilli > limit.CPUMilli:
		return "cpu"
	case r.MemoryBytes > limit.MemoryBytes:
		return "memory"
	case r.DiskBytes > limit.DiskBytes:
		return "disk"
	case r.GPUs > limit.GPUs:
		return "gpu"
	case r.NetMbps > limit.NetMbps:
		return "bandwidth"
	}
	return ""
}

// IsZero reports whether every dimension is zero.
func (r Resources) IsZero() bool { return r == Resources{} }
