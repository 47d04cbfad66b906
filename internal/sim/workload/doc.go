// Package workload builds the pod sequences the simulator submits. Inflate
// is the FGD paper's "workload inflation": the trace's pods plus pods sampled
// uniformly with replacement from the trace until the total GPU request
// reaches a multiple of the cell's GPU capacity, all shuffled into one
// random order. Everything is a pure function of its inputs and seed
// (math/rand/v2 PCG); it never reads a clock or global randomness.
package workload
