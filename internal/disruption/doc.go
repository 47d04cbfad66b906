// Package disruption owns the cell's one rule for voluntary disruption:
// how many replicas of a group the cell may move (drains, quarantine,
// later deployments and the rebalancer) at a given moment, under the
// group's `disruption: {maxUnavailable}` budget.
//
// The core (Allowed) is a pure function of counts, so the scheduler, the
// server and tests all ask the same question the same way. The package
// reads no state and never decides which allocation moves: callers count
// what they see and pick, in their own deterministic order, at most
// Allowed of their candidates. Involuntary unavailability (a crash, a node
// that went down) spends the same budget: the cell never adds voluntary
// disruption to a group that is already short.
package disruption
