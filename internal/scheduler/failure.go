package scheduler

import (
	"slices"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/api"
)

// failure builds the failure of a group that has missing replicas left:
// every node is run through the filter chain once more, against the cell as
// this plan leaves it, and counted under its first rejection.
func (c *cell) failure(g *group, missing int) api.GroupFailure {
	// A group meets few distinct reasons: counted in a short list, each
	// node's reason compared with the list's (most often the same
	// string), then handed over as the map the failure carries.
	var counts []reasonCount
	for i := range c.size() {
		if r := g.fullCheck(c, i); r != "" {
			if vb := c.budgets.blocked[blockKey{g, i}]; vb != nil {
				// Room could have been made here, but not within a
				// victim group's disruption budget.
				r = vb.reason()
			}
			counts = countReason(counts, r)
		}
	}
	reasons := make(map[string]int, len(counts))
	for _, rc := range counts {
		reasons[rc.reason] += rc.nodes
	}
	return c.failureOf(g, missing, reasons)
}

// failureOf is the failure of g with missing replicas and the nodes'
// reasons counted.
func (c *cell) failureOf(g *group, missing int, reasons map[string]int) api.GroupFailure {
	f := api.GroupFailure{
		Group:          g.tg.Name,
		Missing:        missing,
		NodesEvaluated: c.size(),
		Reasons:        reasons,
		Summary:        summarize(reasons),
	}
	if c.size() == 0 {
		f.Summary = "no nodes in the cell"
	}
	return f
}

// summarize words reasons by count, largest first, then alphabetically:
// "7 nodes: insufficient memory; 2 nodes: rack != r3".
func summarize(reasons map[string]int) string {
	texts := make([]string, 0, len(reasons))
	for r := range reasons {
		texts = append(texts, r)
	}
	slices.SortFunc(texts, func(a, b string) int {
		if reasons[a] != reasons[b] {
			return reasons[b] - reasons[a]
		}
		return strings.Compare(a, b)
	})
	var sb strings.Builder
	for i, r := range texts {
		if i > 0 {
			sb.WriteString("; ")
		}
		n := reasons[r]
		sb.WriteString(strconv.Itoa(n))
		if n == 1 {
			sb.WriteString(" node: ")
		} else {
			sb.WriteString(" nodes: ")
		}
		sb.WriteString(r)
	}
	return sb.String()
}

// reasonCount is how many nodes one reason rejected.
type reasonCount struct {
	reason string
	nodes  int
}

// countReason adds a node rejected for r to counts.
func countReason(counts []reasonCount, r string) []reasonCount {
	for k := range counts {
		if counts[k].reason == r {
			counts[k].nodes++
			return counts
		}
	}
	return append(counts, reasonCount{reason: r, nodes: 1})
}
