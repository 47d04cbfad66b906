// Package sim is Strata's discrete-event cluster simulator, the engine
// behind `strata sim`. It replays a trace (package trace) against a model of
// the cell (package cluster) with a placement policy behind the
// cluster.Placer seam (package policy holds the paper's baselines, FGD and
// Strata's FGD+), and reports allocation, pending-time and fragmentation
// metrics.
//
// Two modes:
//
//   - replay honours the trace's creation and end times (or running
//     times), request updates and machine events on a virtual clock; pods
//     wait in a queue offered room at the end of every instant, higher
//     priority first, then in arrival order, and their pending times,
//     evictions and the cell's allocation over time are recorded (the
//     queue keeps pods in classes that sleep until a node that gained
//     room fits them, waitqueue.go);
//   - inflation is the FGD paper's experiment: the trace inflated to 1.3 ×
//     the GPU capacity (package workload), submitted one by one in a seeded
//     random order and never deleted; after each pod the allocated share of
//     GPU, CPU and memory is recorded against the arrived GPU workload.
//
// The engine is deterministic: virtual time only (it never reads the wall
// clock), every random choice from a seeded source, so the same Config gives
// the same Result. Run is single-threaded and stops within one placement of
// its context's cancellation; RunInflationSeeds runs seeds in parallel,
// each on its own cluster and policy.
package sim
