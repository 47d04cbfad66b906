package scheduler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
)

// tierNeed is one task's memory tier request: the tiers its memory may
// live on and how much memory it asks for.
type tierNeed struct {
	tiers  []string
	memory int64
}

// memoryTierNeeds lists the tasks of tg that accept something other than
// standard memory alone (the default every node meets); nil when none
// does, so ordinary groups get no filter.
func memoryTierNeeds(tg *api.TaskGroup) []tierNeed {
	var out []tierNeed
	for _, t := range tg.Tasks {
		if len(t.MemoryTiers) == 0 || slices.Equal(t.MemoryTiers, []string{api.MemoryTierStandard}) {
			continue
		}
		out = append(out, tierNeed{tiers: t.MemoryTiers, memory: t.Resources.MemoryBytes})
	}
	return out
}

// memTierFilter rejects nodes whose NUMA nodes offer a task none of
// the memory tiers it accepts, or, when it accepts only slower tiers,
// less memory in them than the task asks for (docs/hardware.md). It
// reads the fingerprint only: the memory of the tiers is not accounted
// apart from the node's memory dimension. A node without NUMA detail
// has standard memory only.
type memTierFilter struct{}

func (memTierFilter) name() string    { return "memory tier" }
func (memTierFilter) kind() stageKind { return kindStatic }
func (memTierFilter) key(g *group) string {
	return fmt.Sprintf("tiers %v", g.tiers)
}

func (memTierFilter) check(g *group, _ *cell, n *nodeState, _ int) string {
	return tierReason(g.tiers, n.node)
}

// tierReason says why node cannot hold the memory of needs, or "".
func tierReason(needs []tierNeed, node *api.Node) string {
	for _, need := range needs {
		if api.AcceptsTier(need.tiers, api.MemoryTierStandard) {
			continue // every node has standard memory
		}
		var have int64
		found := false
		for _, nu := range node.NUMA {
			if api.AcceptsTier(need.tiers, nu.NUMATier()) {
				found = true
				have += nu.MemoryBytes
			}
		}
		switch {
		case !found:
			return "no memory tier " + strings.Join(need.tiers, "|")
		case have < need.memory:
			return "too little memory in tier " + strings.Join(need.tiers, "|")
		}
	}
	return ""
}
