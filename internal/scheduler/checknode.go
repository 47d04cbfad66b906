package scheduler

import (
	"fmt"

	"github.com/strata-dev/strata/api"
)

// CheckNode re-validates one node's part of a plan against the newest state;
// the single plan applier calls it before committing. existing is the
// node's current allocations (any status), stopping the ids this plan
// stops (preemption victims included: their room goes to the preemptor),
// place the plan's new allocations for the node. It returns false
// with a reason when committing would overcommit an aggregate dimension,
// double-assign an exclusive core or a whole GPU, push a GPU's shares over
// 1000 milli, overcommit a NUMA node's memory, hand out a port twice, give an allocation an
// assignment that does not match its request, or when the node is missing
// or not ready. A part that only stops allocations always fits.
func CheckNode(node *api.Node, existing []*api.Allocation, stopping map[string]bool, place []*api.Allocation) (ok bool, reason string) {
	if len(place) == 0 {
		return true, ""
	}
	if node == nil {
		return false, "node not found"
	}
	if !node.Alive() {
		return false, reasonNotReady
	}
	if r := node.Unschedulable(); r != "" {
		return false, r // cordoned, drained or quarantined after the plan's snapshot
	}
	for _, a := range place {
		if a.TaskGroup == nil {
			continue
		}
		for _, d := range taskDrivers(a.TaskGroup) {
			if !node.HasDriver(d) {
				return false, "alloc " + a.ID + ": no driver " + d
			}
		}
		if r := tierReason(memoryTierNeeds(a.TaskGroup), node); r != "" {
			return false, "alloc " + a.ID + ": " + r
		}
	}

	// The occupancy of cores, GPUs and NUMA memory only matters when a
	// new allocation takes some: applying an allocation without a
	// hardware assignment to it changes and rejects nothing, and the
	// existing ones' conflicts are not this plan's to judge.
	var d *nodeDetail
	for _, a := range place {
		if asg := &a.Assignment; len(asg.CPUs) > 0 || len(asg.GPUs) > 0 || asg.GPUMilli > 0 || len(asg.Ports) > 0 || len(asg.Devices) > 0 {
			d = newNodeDetail(node)
			break
		}
	}
	// Sums are checked, not saturated: a capacity may be math.MaxInt64,
	// which a saturated sum would seem to fit.
	var used api.Resources
	var exact bool
	for _, a := range existing {
		if a.Terminal() || stopping[a.ID] {
			continue
		}
		if used, exact = used.AddChecked(a.Resources); !exact {
			return false, reasonOverflow
		}
		if d != nil {
			d.apply(a)
		}
	}
	for _, a := range place {
		if dim := a.Resources.Negative(); dim != "" {
			return false, "alloc " + a.ID + ": negative " + dim + " request"
		}
		if r := assignmentMismatch(a, node.DynamicPortRange()); r != "" {
			return false, "alloc " + a.ID + ": " + r
		}
		if r := devicesMismatch(a, node); r != "" {
			return false, "alloc " + a.ID + ": " + r
		}
		if used, exact = used.AddChecked(a.Resources); !exact {
			return false, reasonOverflow
		}
		if d != nil {
			if r := d.apply(a); r != "" {
				return false, r
			}
		}
	}
	if dim := used.Exceeds(node.Capacity); dim != "" {
		return false, "insufficient " + dim
	}
	return true, ""
}

// reasonOverflow rejects a node whose allocations' sum does not fit an
// int64: such a node is overcommitted whatever its capacity.
const reasonOverflow = "resource sum overflows"

// assignmentMismatch reports an assignment that does not deliver what the
// allocation is charged for; dynamic ports come from the node's range.
func assignmentMismatch(a *api.Allocation, dynamic api.PortRange) string {
	asg, res := &a.Assignment, &a.Resources
	switch {
	case res.GPUMilli > 0 && (len(asg.GPUs) != 1 || asg.GPUMilli != res.GPUMilli):
		return fmt.Sprintf("gpu share %d milli on %d gpus, want %d milli on 1", asg.GPUMilli, len(asg.GPUs), res.GPUMilli)
	case res.GPUMilli == 0 && int64(len(asg.GPUs)) != res.GPUs:
		return fmt.Sprintf("assigned %d gpus, want %d", len(asg.GPUs), res.GPUs)
	case a.TaskGroup != nil && a.TaskGroup.ExclusiveCores() && int64(len(asg.CPUs))*1000 < res.CPUMilli:
		return fmt.Sprintf("assigned %d cores for %d millicores", len(asg.CPUs), res.CPUMilli)
	case len(asg.CPUs) > 0 && asg.NUMANode < 0:
		return "pinned cores without a NUMA node"
	}
	return portsMismatch(a, dynamic)
}
