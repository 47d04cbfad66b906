// Package churn is the simulator's churn mode (`strata sim --mode churn`):
// a cell kept under more GPU demand than it holds, where pods arrive, run
// for their own trace lifetime and leave, so free capacity is scattered
// over time the way it is in a living cell — and, optionally, a rebalancer
// (internal/rebalance) moves running pods at a set period and budget to
// gather it again.
//
// Arrivals are a seeded Poisson stream of pods drawn uniformly, with
// replacement, from the trace (the FGD paper's sampling); each keeps its
// trace lifetime (deletion − creation). The rate is set so the offered GPU
// load (rate × mean GPU × lifetime) is Load × the cell's GPU capacity. A
// pod that fits nowhere is turned away (the paper's experiment counts it
// failed; nothing waits). The same seed gives every policy the same
// stream, so runs are paired. The pooled bound (Pooled) feeds the same
// stream to a cell without node or GPU boundaries — one pool per GPU model
// — which no placement and no rebalancing can beat: the gap between it and
// a policy is the GPU capacity that policy loses to fragmentation.
//
// Nodes may fail (Config.Failures: down for Repair, their pods
// interrupted and waiting again for the rest of their lifetimes), and a
// caller's model of the cell can follow the simulated time (Config.Clock).
//
// It is deterministic and does no I/O; it reads no clock (times are the
// simulation's).
package churn
