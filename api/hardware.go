package api

// Memory tiers of a node's NUMA nodes (docs/hardware.md). A NUMA node
// with CPUs is standard memory; one without CPUs (CXL-attached memory,
// persistent memory used as RAM) is the slow tier.
const (
	MemoryTierStandard = "standard"
	MemoryTierSlow     = "slow"
)

// MemoryTiers are the tiers a task may name, fastest first.
var MemoryTiers = []string{MemoryTierStandard, MemoryTierSlow}

// Node labels the agent sets from its CPU (docs/hardware.md): the
// architecture as Go names it (amd64, arm64) and one label per ISA
// extension of FeatureFlags the CPU has, e.g. cpu.feature.avx512f=true.
const (
	LabelCPUArch       = "cpu.arch"
	LabelCPUFeaturePfx = "cpu.feature."
)

// NUMATier is the memory tier of NUMA node n: standard unless it says slow.
func (n NUMANode) NUMATier() string {
	if n.Tier == "" {
		return MemoryTierStandard
	}
	return n.Tier
}

// AcceptsTier reports whether a task that names tiers (empty: standard
// only) may have its memory on tier.
func AcceptsTier(tiers []string, tier string) bool {
	if len(tiers) == 0 {
		return tier == MemoryTierStandard
	}
	for _, t := range tiers {
		if t == tier {
			return true
		}
	}
	return false
}
