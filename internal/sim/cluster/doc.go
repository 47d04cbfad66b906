// Package cluster is the simulator's model of a cell: per-node free CPU and
// memory, the free milli-GPU of every single GPU, and the allocations that
// hold them. It owns the never-overcommit invariant: Assign re-checks every
// placement against the node's current free resources and rejects one that
// would overcommit CPU, memory or any GPU's 1000 milli, so a buggy policy
// cannot corrupt the model.
//
// It also defines Placer, the seam between the simulator and a placement
// policy. The model is plain, single-threaded and deterministic: no clock,
// no randomness, no I/O. Accounting is incremental (never recomputed from the
// allocation list), and each node carries a Version that changes whenever
// its free resources change, so policies can cache per-node scores.
package cluster
