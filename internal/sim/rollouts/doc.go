// Package rollouts measures the rollout guard (internal/rolloutguard) the
// way Gandalf (NSDI '20) was measured: on many rollouts, some of bad
// versions and most of them beside unrelated trouble, counting how many
// bad ones it halted (recall) and how many of its halts were right
// (precision). `strata sim rollouts` runs it.
//
// A scenario (scenario.go) is drawn from a seed: a cell of racks of nodes
// of two or three hardware classes, a workload of 10 to 60 copies spread
// over them beside background workloads, an update policy, base rates of
// trouble, and a new version from one of five families — good (its rates
// within ±20 % of the old), crash-on-start, slow leak (OOM after a random
// uptime), failing a fraction of requests (health checks flipping), bad on
// one class of nodes only — each with random parameters. Unrelated trouble
// is laid over it at random: a rack that goes down mid-rollout, a rack
// whose network flaps (every workload on it fails checks and restarts), a
// bad node.
//
// A run (run.go) rolls the version out on a 5 s virtual clock with the
// deployments' own rules (rollout.Decide and rollout.AllocHealth, the code
// the scheduler runs), feeds every piece of trouble to the incident engine
// (internal/incident) and the workload's to the guard, which asks the
// engine to explain before it blames. The model is a simulator's, not a
// cell's: placements are random over the nodes that are up, lost copies
// are replaced by the same version after 30 s, a copy that crashes three
// times fails and is replaced. Runs are deterministic (seeded, virtual
// time, no I/O) and independent, so they run in parallel.
package rollouts
