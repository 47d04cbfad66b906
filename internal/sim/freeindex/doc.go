// Package freeindex keeps the up nodes of a simulated cell ordered by free
// CPU, so that a placement policy finds its node without scoring every
// node: the lowest-ranked node that fits a request (a first fit in the
// policy's seeded node order), the feasible node with the least free CPU
// (best fit), the lowest-ranked feasible node in a range of free CPU, and
// the k-th up node in index order (uniform draws).
//
// The nodes live in blocks of about √n entries ordered by (free CPU, node);
// each block also lists its entries by rank and knows its most free
// memory. A query walks the blocks, skips those that cannot hold an answer
// (free CPU below the request, too little memory, ranks no better than the
// best found) and stops inside a block at its first hit in rank order.
// Costs, for n indexed nodes: an update (a placement, a release, a node
// going up or down) is O(√n); a query is O(√n) blocks plus the entries it
// must look at inside them, which is one per block while the answer's
// feasibility is common (small requests on a big cell) and at worst every
// entry of the blocks whose memory bound passes.
//
// It knows nothing of policies or scores: a policy asks for ranges and
// ranks (package policy's Selector does). It reads a cluster.Cluster only
// through its change log (Sync), and must never change it.
package freeindex
