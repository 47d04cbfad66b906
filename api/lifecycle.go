package api

import "time"

// Reschedule delay functions: how the wait before the n-th replacement of a
// failed allocation grows.
const (
	DelayConstant    = "constant"    // delay, every time
	DelayExponential = "exponential" // delay, 2·delay, 4·delay, …
	DelayFibonacci   = "fibonacci"   // delay, delay, 2·delay, 3·delay, 5·delay, …
)

// Reconnect choices: which copy of a replica survives when a node that went
// silent comes back and its allocation was replaced meanwhile.
const (
	KeepOriginal    = "keep-original"
	KeepReplacement = "keep-replacement"
)

// ReschedulePolicy says whether and when the server replaces a failed
// allocation of a group with a new one (possibly on another node). The
// agent's RestartPolicy acts first, on the node; this acts once the
// allocation failed for good. Lost allocations (their node went away) are
// governed by DisconnectPolicy instead and never count here.
type ReschedulePolicy struct {
	// Attempts is how many replacements are allowed within Interval.
	// 0 with Unlimited false disables rescheduling.
	Attempts int           `json:"attempts"`
	Interval time.Duration `json:"interval"`
	// Delay is the wait before the first replacement; DelayFunction grows
	// it for the following ones, never beyond MaxDelay.
	Delay         time.Duration `json:"delay"`
	DelayFunction string        `json:"delayFunction"`
	MaxDelay      time.Duration `json:"maxDelay"`
	// Unlimited replaces for ever (Attempts and Interval are ignored).
	Unlimited bool `json:"unlimited,omitempty"`
}

// Disabled reports whether the policy never replaces a failed allocation.
func (p ReschedulePolicy) Disabled() bool { return !p.Unlimited && p.Attempts <= 0 }

// DisconnectPolicy says what happens to a group's allocations when their
// node stops heartbeating (it crashed, hangs, or is cut off).
type DisconnectPolicy struct {
	// LostAfter is how long after the node is marked down its allocations
	// stay "unknown" before they are declared lost (and replaced). 0:
	// lost at once.
	LostAfter time.Duration `json:"lostAfter"`
	// Replace places a replacement while an allocation is unknown. When
	// false, the group runs short until the node returns or LostAfter ends.
	Replace bool `json:"replace"`
	// Reconcile is the server's choice when the node returns and an
	// unknown allocation was replaced meanwhile: KeepOriginal or
	// KeepReplacement. The other copy is stopped at once.
	Reconcile string `json:"reconcile"`
	// StopAfter, when set, makes the cut-off agent itself stop the group's
	// tasks once it has not renewed its lease with a server for that long.
	// 0: the agent keeps them running while it is cut off.
	StopAfter time.Duration `json:"stopAfter,omitempty"`
}

// Effective reschedule and disconnect policies of a group. A group stored
// by an older Strata has neither: it gets the defaults of its restart mode.

// ReschedulePolicyOf returns the group's reschedule policy, defaulted.
func (g *TaskGroup) ReschedulePolicyOf() ReschedulePolicy {
	if g.Reschedule != nil {
		return *g.Reschedule
	}
	return DefaultReschedulePolicy(g.RestartPolicy.Mode)
}

// DisconnectPolicyOf returns the group's disconnect policy, defaulted.
func (g *TaskGroup) DisconnectPolicyOf() DisconnectPolicy {
	if g.Disconnect != nil {
		return *g.Disconnect
	}
	return DefaultDisconnectPolicy()
}

// Defaults of the reschedule block (docs/workload-spec.md).
const (
	DefaultRescheduleAttempts = 3
	DefaultRescheduleInterval = time.Hour
	DefaultRescheduleDelay    = 5 * time.Second
	DefaultRescheduleMaxDelay = 5 * time.Minute
)

// DefaultReschedulePolicy is the policy of a group that writes no
// reschedule block: 3 replacements within an hour, 5 s, 10 s, 20 s apart,
// at most 5 minutes; none at all for restartPolicy never, which asks for a
// task that runs once.
func DefaultReschedulePolicy(restartMode string) ReschedulePolicy {
	p := ReschedulePolicy{
		Attempts: DefaultRescheduleAttempts, Interval: DefaultRescheduleInterval,
		Delay: DefaultRescheduleDelay, DelayFunction: DelayExponential, MaxDelay: DefaultRescheduleMaxDelay,
	}
	if restartMode == RestartNever {
		p.Attempts = 0
	}
	return p
}

// DefaultDisconnectPolicy is the policy of a group that writes no
// disconnect block: lost as soon as the node is down, replaced at once, and
// the replacement wins when the node returns.
func DefaultDisconnectPolicy() DisconnectPolicy {
	return DisconnectPolicy{Replace: true, Reconcile: KeepReplacement}
}

// ReasonFenced is in the client reason of an allocation its agent stopped
// because the agent could not renew its lease in time (an at-most-once
// group, or disconnect.stopAfter). The server replaces it at once and does
// not count it as a failure.
const ReasonFenced = "fenced: lease lapsed"

// DefaultKillTimeout is the grace between SIGTERM and SIGKILL of a task
// that sets none.
const DefaultKillTimeout = 5 * time.Second

// StopGrace is how long the group's tasks may take to stop: the longest
// killTimeout of its tasks.
func (g *TaskGroup) StopGrace() time.Duration {
	grace := time.Duration(0)
	for _, t := range g.Tasks {
		k := t.KillTimeout
		if k <= 0 {
			k = DefaultKillTimeout
		}
		grace = max(grace, k)
	}
	return grace
}
