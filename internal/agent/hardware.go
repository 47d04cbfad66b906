package agent

import (
	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/fingerprint"
)

// hardwareFacts puts what the fingerprint found about huge pages and the
// CPU on the node (docs/hardware.md): the 2Mi and 1Gi pools as capacity,
// taken out of the memory capacity (the kernel counts a pre-allocated pool
// in MemTotal, yet no ordinary allocation can use it), and the CPU's
// architecture and ISA extensions as labels that placement rules match
// (cpu.arch=arm64, cpu.feature.avx512f=true). Operator labels set after
// it win.
func (a *Agent) hardwareFacts(n *api.Node, fp *fingerprint.Result) {
	n.Capacity.HugePages2Mi, n.Capacity.HugePages1Gi = fp.HugePages.HugePages2Mi, fp.HugePages.HugePages1Gi
	n.Capacity.MemoryBytes = max(0, n.Capacity.MemoryBytes-fp.HugePages.HugePages2Mi-fp.HugePages.HugePages1Gi)
	if len(fp.OtherHugePages) > 0 {
		a.log.Info("huge page pools of sizes the cell does not schedule", "pools", fp.OtherHugePages)
	}
	if fp.CPUArch != "" {
		n.Labels[api.LabelCPUArch] = fp.CPUArch
	}
	for _, f := range fp.CPUFeatures {
		n.Labels[api.LabelCPUFeaturePfx+f] = "true"
	}
}
