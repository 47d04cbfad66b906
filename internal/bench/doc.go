// Package bench measures the scheduler at cell scale. It generates a
// deterministic synthetic cell from a seed — nodes with a realistic topology
// (region, zone, datacenter, row, rack, powerZone, switch), mixed machine
// shapes (CPU-only and GPU nodes with models and NUMA layouts) and a workload
// mix (resource shapes, require/prefer/avoid label rules, spread, affinity
// and anti-affinity, peers, data locality, exclusive cores, whole and
// shared GPUs, gangs, priorities, binpack or spread) — and places it from
// scratch, one evaluation per workload, the way the server does: Schedule
// on the current state, then the plan applier's rules (internal/planapply,
// the server's own: CheckNode per node, fresh ids, gangs all-or-nothing, no
// eviction for an unplaced preemptor), and the accepted part is applied to
// an in-memory State that keeps Node.Allocated incrementally. Run reports placements, failures with their reasons, wall
// time, placements/s, peak RSS and heap, and verifies with an independent
// accounting that no node ends up overcommitted, no gang partial, and no
// hard spread or self anti-affinity rule broken.
//
// The same code backs `strata bench` and BenchmarkCell10kNodes100kTasks.
package bench
