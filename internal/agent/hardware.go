package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
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

// taskMems is the cpuset.mems of a task: the NUMA nodes of the memory
// tiers it accepts (standard only unless it names others). A pinned task
// keeps its standard memory on the NUMA node of its cores. nil (the
// parent's mems) on a node without NUMA detail; an error when the node
// has no memory of a tier the task accepts: the scheduler placed it on a
// node whose fingerprint has changed since.
func taskMems(numa []api.NUMANode, asg api.Assignment, task *api.Task) ([]int, error) {
	if len(numa) == 0 {
		return nil, nil
	}
	pinned := len(asg.CPUs) > 0 && asg.NUMANode >= 0
	var mems []int
	for _, nu := range numa {
		tier := nu.NUMATier()
		switch {
		case !api.AcceptsTier(task.MemoryTiers, tier):
		case tier == api.MemoryTierStandard && pinned && nu.ID != asg.NUMANode:
		case tier == api.MemoryTierStandard && len(nu.CPUs) == 0 && nu.MemoryBytes == 0:
			// neither CPUs nor memory: an offline node
		default:
			mems = append(mems, nu.ID)
		}
	}
	if len(mems) == 0 {
		tiers := task.MemoryTiers
		if len(tiers) == 0 {
			tiers = []string{api.MemoryTierStandard}
		}
		return nil, fmt.Errorf("%w: no NUMA node of memory tier %s", drivers.ErrWrongNode, strings.Join(tiers, " or "))
	}
	return mems, nil
}

// refuseHook fails every start of a task the agent knows cannot run on
// this node (a prestart hook): err wraps drivers.ErrWrongNode, so the
// task fails for good without its restart policy.
type refuseHook struct{ err error }

func (h refuseHook) prestart(context.Context, *drivers.TaskConfig, <-chan struct{}) error {
	return h.err
}
