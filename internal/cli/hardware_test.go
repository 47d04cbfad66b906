package cli

import (
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestNodeLabelsCountCPUFeatures(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   string
	}{
		{nil, "-"},
		{map[string]string{"rack": "r1"}, "rack=r1"},
		{map[string]string{"cpu.arch": "amd64", "cpu.feature.avx2": "true", "cpu.feature.avx512f": "true", "rack": "r1"},
			"cpu.arch=amd64,rack=r1,cpu.feature.*: 2"},
		{map[string]string{"cpu.feature.sve": "true"}, "cpu.feature.*: 1"},
	} {
		if got := nodeLabels(tc.labels); got != tc.want {
			t.Errorf("nodeLabels(%v) = %q, want %q", tc.labels, got, tc.want)
		}
	}
}

func TestNUMAZone(t *testing.T) {
	if got := numaZone(api.NUMANode{ID: 0, CPUs: []int{0, 1}}); got != "0:2cpu" {
		t.Errorf("standard zone = %q", got)
	}
	if got := numaZone(api.NUMANode{ID: 1, MemoryBytes: 64 << 30, Tier: api.MemoryTierSlow}); got != "1:slow 64GiB" {
		t.Errorf("slow zone = %q", got)
	}
}
