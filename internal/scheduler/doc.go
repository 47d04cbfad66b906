// Package scheduler is Strata's placement engine. Given a read-only snapshot
// of the cell (State), one Evaluation and Options (a seed and the time),
// Schedule computes the Plan that reconciles one workload: which allocations
// to stop, which replicas to place, on which node, with which exclusive cores
// and GPUs, and — for whatever did not fit — why, counted per node.
//
// It owns reconciliation (desired replicas against existing allocations),
// the placement pipeline (seeded node order → feasibility filters → scoring
// plugins → selection → hardware assignment) and CheckNode, the per-node
// re-validation the plan applier runs before it commits a plan.
//
// It must never do I/O, read the clock, keep global state or use global
// randomness (invariant 1): a plan is a pure function of the snapshot, the
// evaluation and Options, so the server, the simulator and the benchmarks
// replay the very same decisions. Time comes in as Options.Now and every
// random choice is drawn from Options.Seed. It never commits anything
// either: the plan applier is the single writer of placements.
//
// Rules a caller should know (README.md has the pipeline and the details):
//   - A replica whose allocation failed is replaced per its group's
//     ReschedulePolicy (reconcile.go, internal/reschedule): after a delay,
//     through a follow-up evaluation (Plan.FollowUps) due at that time; when
//     the attempts within the interval are spent, the failed allocation is
//     stopped with the reason ("reschedule attempts exhausted: 3 in 1h") and
//     its index stays empty.
//   - An allocation of a down node stays "unknown" for its group's
//     disconnect.lostAfter (an at-most-once one until its node's lease has
//     surely expired, internal/lease) before it is lost and replaced; when
//     the node returns, disconnect.reconcile picks the copy that stays.
//   - A group with exclusive cores is charged whole cores: its
//     Allocation.Resources.CPUMilli is rounded up to a multiple of 1000, so the
//     aggregate accounting sees the cores it really holds.
//   - Allocations on draining nodes keep running; draining only refuses new
//     placements. An index whose latest allocation completed while desired to
//     run is finished and is not placed again.
//   - A replica that fits nowhere may preempt strictly lower-priority
//     allocations of other workloads on one node; the victims are stopped
//     in the same plan with PreemptedBy set, and Plan.Preemptions counts
//     them. Equal or higher priority is never preempted.
//   - A gang group is placed all-or-nothing: at least its gang size
//     (MinMember, counting members already running) or nothing, in the
//     tightest topology domain that holds it.
//   - Allocation ids are drawn from Options.Seed mixed with the evaluation id;
//     callers must vary the seed between attempts to get fresh ids. Ids
//     drawn by a gang trial that is rolled back are given back.
//   - Two optional aids make repeated calls cheaper without changing any
//     plan: a State may implement NodeIndexer (label values, topology
//     domains and core layouts of nodes whose labels and layouts do not
//     change across snapshots) — or, when its node objects change while
//     their topology does not, report a TopologyVersion and be bound to an
//     IndexCache — and a caller that schedules one evaluation at a time
//     may pass Options.Scratch.
//   - The package defines what it needs of a snapshot (State,
//     TopologyVersioner, NodeVersioner); stores implement it without
//     importing the engine.
//   - A State that gives every node a version (NodeVersioner) and a caller
//     that passes a Scratch get Borg's score cache: verdicts and scores of
//     node-local stages kept across evaluations per equivalence class and
//     node version (scorecache.go), with the same plans.
package scheduler
