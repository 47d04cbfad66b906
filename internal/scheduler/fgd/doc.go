// Package fgd is the scheduler's fragmentation-aware policy ("fgd" in a
// workload's schedulingPolicy or the cell's default): fragmentation gradient
// descent (Weng et al., ATC '23) with Strata's CPU-aware tie-break, the
// policy the simulator calls FGD+.
//
// A replica goes to the node, and a GPU share to the GPU, where the cell's
// GPU fragmentation (internal/frag, measured against the GPU shapes the
// cell runs) grows least, scored as the paper's simulator does (whole
// 0..100 steps). Among nodes in the same step the CPU-aware key decides —
// CPU-only replicas to the node with the least idle GPU, GPU replicas
// where they best even out free CPU against free GPU — and then a stable
// per-node rank, so that ties consolidate onto the same nodes evaluation
// after evaluation instead of scattering.
//
// The mathematics (FGD's step, FGD+'s key) are internal/frag's, shared
// with the simulator's FGD and FGD+; this package only presents the
// scheduler's NodeView to them and combines the results in one score.
//
// It plugs into internal/scheduler through Options.Policies as a
// GPUScorer and ShareChooser. New returns a Policy whose scorers are made
// per group and plan, so they may keep scratch space; the Config itself is
// read-only and may be shared by parallel workers.
package fgd
