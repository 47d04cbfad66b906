package cli

import (
	"fmt"
	"strings"

	"github.com/strata-dev/strata/api"
)

// nodeLabels is formatLabels for the node list: the cpu.feature.* labels
// the agent sets (one per ISA extension, docs/hardware.md) are counted,
// not listed; `strata nodes -o json` has them all.
func nodeLabels(labels map[string]string) string {
	rest := make(map[string]string, len(labels))
	features := 0
	for k, v := range labels {
		if strings.HasPrefix(k, api.LabelCPUFeaturePfx) {
			features++
			continue
		}
		rest[k] = v
	}
	out := formatLabels(rest)
	if features == 0 {
		return out
	}
	summary := fmt.Sprintf("%s*: %d", api.LabelCPUFeaturePfx, features)
	if out == "-" {
		return summary
	}
	return out + "," + summary
}

// numaZone describes one NUMA node for the node list: "0:4cpu", or
// "1:slow 64GiB" for a CPU-less node of the slow memory tier.
func numaZone(z api.NUMANode) string {
	if z.NUMATier() != api.MemoryTierStandard {
		return fmt.Sprintf("%d:%s %s", z.ID, z.NUMATier(), bytesStr(z.MemoryBytes))
	}
	return fmt.Sprintf("%d:%dcpu", z.ID, len(z.CPUs))
}
