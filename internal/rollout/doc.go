// Package rollout is the pure core of deployments: when a replacement is
// healthy (AllocHealth), which old allocations of a group may stop and
// which slots may get a replacement now (Decide), and what a deployment's
// status is (Status). It has no clock, no I/O and no state of its own:
// the scheduler's reconciler calls it with the evaluation's time, so a
// rolling update is replayable like every plan. It must never stop an old
// allocation whose replacement is not healthy.
package rollout
