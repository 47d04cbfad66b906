// Package frag measures GPU fragmentation the way the FGD paper (Weng et al.,
// "Beware of Fragmentation", USENIX ATC '23) defines it, as pure functions
// over a node's free resources. The simulator's FGD and FGD+ policies
// (internal/sim/policy) and the scheduler's fgd policy
// (internal/scheduler/fgd) share it, so the server places with the very
// measure the published experiment validates.
//
// A target workload is a distribution over task types (CPU request, GPU
// count, per-GPU milli, acceptable models) with popularities summing to 1.
// For one task type m, a node's idle GPU milli is fragmented when m cannot
// use it: all of it when m needs no GPU, cannot use the node's GPU model, or
// does not fit the node at all (too little CPU or too few GPUs with enough
// free milli); otherwise only the GPUs whose free milli is below m's per-GPU
// need. The node's fragmentation is the expectation over the distribution,
// in milli-GPU: the GPU capacity a random task from the workload could not
// use. Like the paper, it considers CPU and GPU only, not memory.
//
// It also holds the mathematics of the policies built on the measure, once
// (step.go): FGD's step — the whole 0..100 score of a node's fragmentation
// decrease for one more task, and the GPU a share takes (Distribution.Step)
// — and FGD+'s CPU-aware second key (CPUKey, CPUPerGPU). The simulator's
// paper-faithful FGD and FGD+ and the server's fgd plugin are adapters
// that call them with their own node and task types; a new policy on the
// measure builds on them too.
//
// A Distribution is immutable once bound (Bind) and then safe for
// concurrent use; the package holds no global state.
package frag
