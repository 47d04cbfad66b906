// Package planapply holds the plan applier's rules: which parts of a plan
// may be committed against the newest state. The server's plan applier,
// the bench's in-memory state and the simulator's scheduler placer all
// commit through Decide, so a rule added here (or a rule missing) holds
// for all three alike.
//
// The rules, in order:
//
//   - every node's placements are re-checked with scheduler.CheckNode
//     against the node's current allocations, minus the plan's stops on
//     it (optimistic concurrency: the plan was computed on an older
//     snapshot);
//   - every placement must have an id no allocation ever had and no other
//     placement of the plan uses (ids are never reused, invariant 8);
//   - the placements of the nodes that passed may not take the plan's
//     namespace beyond its quota (quota.go), counting the namespace's
//     usage in the newest state less what the plan stops; otherwise no
//     placement is committed;
//   - the evictions of the remaining nodes' placements may not take a
//     victim's group beyond its disruption budget (budget.go; the
//     engine's rule, scheduler.VictimBudgets), counted against the newest
//     state in node order: a node whose evictions would is rejected;
//   - a plan that places a gang member is all-or-nothing (invariant 4):
//     if any node is rejected, no placement is committed;
//   - stops never overcommit anything and are committed in a stable
//     order, except evictions whose preemptor is not committed: nobody is
//     evicted for nothing.
//
// The package decides; it writes nothing. It imports no store.
package planapply
