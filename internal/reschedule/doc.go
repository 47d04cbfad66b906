// Package reschedule is the arithmetic of the server-side replacement of
// failed allocations: given a group's ReschedulePolicy, the failures of one
// replica's chain and the time, it says whether a replacement is placed,
// when, and if not, why the replica is dead. It is pure (no clock, no I/O),
// so the scheduler, `strata status` and the tests share one answer.
package reschedule
