package resources

import (
	"math"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestLimits(t *testing.T) {
	tests := []struct {
		limit Limit
		v     int64
		want  string
	}{
		{CPULimit, MaxCPUMilli, ""},
		{CPULimit, 0, ""},
		{CPULimit, MaxCPUMilli + 1, "must be at most 1000000 cores, got 1000000001m"},
		{CPULimit, math.MaxInt64, "must be at most 1000000 cores, got 9223372036854775807m"},
		{CPULimit, -1000, "must not be negative, got -1 cores"},
		{MemoryLimit, MaxMemoryBytes + 1, "must be at most 1PiB, got 1125899906842625B"},
		{DiskLimit, 9 * PiB, "must be at most 8PiB, got 9PiB"},
		{GPULimit, 4097, "must be at most 4096, got 4097"},
		{GPUMilliLimit, 1000, "must be at most 999, got 1000"},
		{BandwidthLimit, MaxNetMbps + 1000, "must be at most 1000Tbps, got 1000.001Tbps"},
	}
	for _, tt := range tests {
		if got := tt.limit.Check(tt.v); got != tt.want {
			t.Errorf("%s.Check(%d) = %q, want %q", tt.limit.Name, tt.v, got, tt.want)
		}
	}
}

func TestOutOfRange(t *testing.T) {
	if v := OutOfRange(api.Resources{CPUMilli: MaxCPUMilli, MemoryBytes: MaxMemoryBytes, DiskBytes: MaxDiskBytes,
		GPUs: MaxGPUs, GPUMilli: MaxGPUMilli, NetMbps: MaxNetMbps}); v != nil {
		t.Fatalf("the maxima themselves are out of range: %+v", v)
	}
	v := OutOfRange(api.Resources{CPUMilli: -1, NetMbps: math.MaxInt64})
	if len(v) != 2 || v[0].Field != "cpuMilli" || v[1].Field != "netMbps" {
		t.Fatalf("violations %+v, want cpuMilli and netMbps", v)
	}
	// The bounds keep sums far inside int64: a thousand of the largest
	// quantity still fit (a node that re-registers with less capacity
	// keeps what it holds, so a node's sum may pass its capacity).
	for _, l := range Limits {
		if l.Max > math.MaxInt64/1000 {
			t.Errorf("%s: maximum %d leaves no room for sums of a thousand", l.Name, l.Max)
		}
	}
}
