// Package gpushare recommends the share of one GPU (in milli-GPU, the unit
// of a workload's `gpu` request) a task needs, from its duty cycle measured
// while it held a whole GPU: the share of time the GPU was busy. A task
// busy 27 % of the time at its 95th percentile does not need a whole GPU;
// sized at its recommendation, FGD+ packs several such tasks on one.
//
// The recommendation covers the GPU's time only: whether the tasks' models
// fit in one GPU's memory together is the scheduler's check, not this
// package's. It never sees other tasks, never reads the clock and does no
// I/O: the same samples give the same answer.
package gpushare
