// Package history records what clients did to a Strata cell and checks it.
//
// A Recorder collects operations on workloads (create/update, stop, purge,
// get, and reads of a workload's allocations) with the time each was
// invoked and the time its answer came back. An answer that never came, or
// came as a timeout, a reset connection or a 5xx the server does not
// promise to be harmless, is indeterminate: the write may have happened or
// not, at any time after it was invoked. Such an operation is recorded
// with no return time, never as a failure.
//
// Check decides whether a history is linearizable against the sequential
// model of the workload table in model.go (porcupine, partitioned per
// workload name) and counts acknowledged writes the final state does not
// reflect. On a violation it writes porcupine's HTML visualization and the
// history as JSON next to each other, and says where.
//
// The package is a pure core: it never talks to a cell. The load generator
// and the fault scenarios in test/faults feed it.
package history
