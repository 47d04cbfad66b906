// Package rebalance finds the moves of running tasks that leave a cell
// better placed than it is: GPU capacity gathered again (FGD's
// fragmentation measure, internal/frag), CPU and memory no longer stranded
// (free on a node where no task of the cell's shapes fits beside the
// other dimension), hot nodes relieved, whole nodes emptied, and
// preferences a task could not have when it was placed honoured now that
// a node for them has room.
//
// Plan is a pure function of the cell it is shown (nodes with what they
// have free, tasks with what they hold and where) and its Config (the
// time, the move budget, the cooldown, the groups' disruption budgets, the
// measure's weights). It returns at most MaxMoves moves, greedily, each
// the best single move it finds at that point, judged on the cell as the
// moves before it left it; every move
//
//   - is make-before-break: its target has room for the task while the
//     source still holds it (a move within a node needs room for both
//     copies on that node), so the caller can place the copy, see it
//     healthy or its migration commit, and only then stop the original;
//   - strictly lowers the cell's measure (Measure, the weighted sum of the
//     components above) by at least MinGain — the plan never makes the
//     cell worse by its own measure, and says so in Before and After; the
//     moves of an evacuation (a node emptied in one go, Move.Evacuation)
//     lower it by MinGain each together, not necessarily one by one;
//   - moves a task at most once per plan and never one moved less than
//     Cooldown ago, one that is not Movable (its group opted out, a
//     deployment is running, its driver can neither migrate nor replace
//     it), or one whose group's disruption budget is spent.
//
// The same code serves the simulator (`strata sim --mode churn
// --rebalance`) and the cell's leader loop; it reads no clock, draws no
// random number and does no I/O. It never evicts a task without a placed
// target (the Kubernetes descheduler's flaw): it only proposes moves
// whose target fits.
package rebalance
