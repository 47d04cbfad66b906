package bench

import (
	"fmt"
	"maps"
	"slices"

	"github.com/strata-dev/strata/api"
)

// checkRelations verifies, independently of the scheduler's code, that the
// hard relation rules of every group hold at the end of a run:
//
//   - hard anti-affinity about the workload's own allocations: no live
//     replica shares a domain of the rule's key with another live
//     allocation of the target;
//   - hard spread: the group's live replicas per domain of the key differ
//     by at most maxSkew among the eligible domains (those with a ready
//     node that passes the group's require rules), and no replica runs on
//     a node without the key.
//
// Spread is a rule about placements: a group that lost replicas to
// preemption may end up skewed without any placement breaking it, so such
// groups are not checked and are counted in unchecked instead. Rules about
// other workloads are not checked either: they bind the group when it is
// placed, not the other workload placed after it.
func checkRelations(st *State, wls []*api.Workload) (violations []string, unchecked int) {
	ck := &relationCheck{st: st, domains: map[string][]string{}, eligible: map[string]map[string]bool{}}
	for _, w := range wls {
		allocs := st.AllocsByWorkload(w.Namespace, w.Name)
		for _, g := range w.Groups {
			var mine []*api.Allocation
			preempted := false
			for _, a := range allocs {
				if a.Group != g.Name {
					continue
				}
				preempted = preempted || a.PreemptedBy != ""
				if isLive(a) {
					mine = append(mine, a)
				}
			}
			name := w.Name + "/" + g.Name
			for _, r := range g.Placement.AntiAffinity {
				if r.Mode == api.ModeSoft || (r.Workload != "" && r.Workload != w.Name) {
					continue
				}
				violations = append(violations, ck.selfAnti(name, mine, targetAllocs(allocs, w.Name, g.Name, r), r.Key)...)
			}
			hasSpread := slices.ContainsFunc(g.Placement.Spread, func(r api.SpreadRule) bool { return r.Mode != api.ModeSoft })
			if !hasSpread {
				continue
			}
			if preempted {
				unchecked++
				continue
			}
			for _, r := range g.Placement.Spread {
				if r.Mode != api.ModeSoft {
					violations = append(violations, ck.spread(name, g, mine, r)...)
				}
			}
		}
	}
	return violations, unchecked
}

// targetAllocs is the live allocations an anti-affinity rule of group
// about its own workload is about: the group's (no workload named), the
// named group's, or every group's.
func targetAllocs(allocs []*api.Allocation, workload, group string, r api.AffinityRule) []*api.Allocation {
	want := group
	if r.Workload == workload {
		want = r.Group
	}
	var out []*api.Allocation
	for _, a := range allocs {
		if isLive(a) && (want == "" || a.Group == want) {
			out = append(out, a)
		}
	}
	return out
}

// relationCheck remembers, per key, every node's domain and, per key and
// require rules, the eligible domains, which many groups share.
type relationCheck struct {
	st       *State
	domains  map[string][]string        // key → node → domain ("": none)
	eligible map[string]map[string]bool // key and rules → eligible domains
}

// domain is node id's domain of key, "" when it has none.
func (ck *relationCheck) domain(id, key string) string {
	doms, ok := ck.domains[key]
	if !ok {
		doms = make([]string, len(ck.st.nodes))
		for i, n := range ck.st.nodes {
			doms[i], _ = domainOf(n, key)
		}
		ck.domains[key] = doms
	}
	if i, ok := ck.st.nodeIdx[id]; ok {
		return doms[i]
	}
	return ""
}

func (ck *relationCheck) selfAnti(name string, mine, target []*api.Allocation, key string) []string {
	perDomain := map[string]int{}
	for _, a := range target {
		if d := ck.domain(a.NodeID, key); d != "" {
			perDomain[d]++
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range mine {
		d := ck.domain(a.NodeID, key)
		if d == "" || seen[d] {
			continue
		}
		// a counts itself once when it is a target too.
		if others := perDomain[d] - 1; others > 0 {
			seen[d] = true
			out = append(out, fmt.Sprintf("%s: hard anti-affinity over %s: %d allocations in %s %s", name, key, others+1, key, d))
		}
	}
	return out
}

func (ck *relationCheck) spread(name string, g *api.TaskGroup, mine []*api.Allocation, r api.SpreadRule) []string {
	sig := fmt.Sprintf("%s %v", r.Key, g.Placement.Require)
	eligible, ok := ck.eligible[sig]
	if !ok {
		eligible = map[string]bool{}
		for _, n := range ck.st.nodes {
			if d := ck.domain(n.ID, r.Key); d != "" && !eligible[d] && n.Ready() && matchesAll(g.Placement.Require, n.Labels) {
				eligible[d] = true
			}
		}
		ck.eligible[sig] = eligible
	}
	counts := make(map[string]int, len(eligible))
	for d := range eligible {
		counts[d] = 0 // eligible even when empty
	}
	var out []string
	for _, a := range mine {
		d := ck.domain(a.NodeID, r.Key)
		if d == "" {
			out = append(out, fmt.Sprintf("%s: hard spread over %s: a replica on %s, which has no %s label", name, r.Key, a.NodeID, r.Key))
			continue
		}
		counts[d]++
	}
	if len(counts) == 0 {
		return out
	}
	lo, hi := -1, 0
	loD, hiD := "", ""
	for _, d := range slices.Sorted(maps.Keys(counts)) {
		if c := counts[d]; lo < 0 || c < lo {
			lo, loD = c, d
		}
		if c := counts[d]; c > hi {
			hi, hiD = c, d
		}
	}
	if hi-lo > r.MaxSkew {
		out = append(out, fmt.Sprintf("%s: hard spread over %s: skew %d > maxSkew %d (%s %s has %d, %s %s has %d)",
			name, r.Key, hi-lo, r.MaxSkew, r.Key, hiD, hi, r.Key, loD, lo))
	}
	return out
}

// domainOf is a node's domain of key: its label, and for "node" its node
// label or else its id.
func domainOf(n *api.Node, key string) (string, bool) {
	if n == nil {
		return "", false
	}
	if v, ok := n.Labels[key]; ok {
		return v, true
	}
	if key == api.LabelNode {
		return n.ID, true
	}
	return "", false
}

// matchesAll reports whether labels satisfy every require rule; a missing
// label satisfies only != and notin.
func matchesAll(rules []api.LabelRule, labels map[string]string) bool {
	for _, r := range rules {
		v, ok := labels[r.Key]
		var match bool
		switch r.Op {
		case api.OpExists:
			match = ok
		case api.OpEqual:
			match = ok && len(r.Values) > 0 && v == r.Values[0]
		case api.OpNotEqual:
			match = !ok || len(r.Values) == 0 || v != r.Values[0]
		case api.OpIn:
			match = ok && slices.Contains(r.Values, v)
		case api.OpNotIn:
			match = !ok || !slices.Contains(r.Values, v)
		}
		if !match {
			return false
		}
	}
	return true
}

// isLive is an allocation that runs, or will: desired to run and not
// terminal.
func isLive(a *api.Allocation) bool { return a.DesiredStatus == api.DesiredRun && !a.Terminal() }
