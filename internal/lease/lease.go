package lease

import (
	"fmt"
	"time"
)

// Defaults of the lease arithmetic.
const (
	// DefaultDrift bounds how much faster or slower than real time any
	// machine's clock may run (1%).
	DefaultDrift = 0.01
	// DefaultMargin covers timer and scheduling jitter on either side.
	DefaultMargin = 250 * time.Millisecond
)

// Params are the lease's constants, shared by agent and server.
type Params struct {
	Drift  float64       // relative clock-rate error bound, 0 ≤ Drift < 0.5
	Margin time.Duration // jitter allowance, ≥ 0
}

// Defaults returns the default parameters.
func Defaults() Params { return Params{Drift: DefaultDrift, Margin: DefaultMargin} }

// Fence is when the agent stops an at-most-once copy, on the agent's own
// monotonic clock (any origin: the times are offsets from it).
type Fence struct {
	StopAt time.Duration // send SIGTERM
	KillAt time.Duration // SIGKILL whatever is left; the copy is gone by then
	// Short is set when the lease is too short for the stop grace: the
	// copy is fenced at once after every renewal (the operator must lengthen
	// the heartbeat TTL or shorten killTimeout).
	Short bool
}

// AgentFence is the fence of a lease renewed by a request sent at
// renewSent (before the server saw it, so the lease cannot have started
// earlier) for lease, for a group whose tasks need grace between SIGTERM
// and SIGKILL. The agent's clock may run slow by Drift, so it counts only
// lease·(1−Drift) of it, minus Margin: by real time the copy is dead before
// renewSent + lease.
func AgentFence(p Params, renewSent, lease, grace time.Duration) Fence {
	killAt := renewSent + scale(lease, 1-p.Drift) - p.Margin
	stopAt := killAt - grace
	if stopAt <= renewSent {
		return Fence{StopAt: renewSent, KillAt: max(killAt, renewSent), Short: true}
	}
	return Fence{StopAt: stopAt, KillAt: killAt}
}

// ServerReplaceAfter is the earliest time the server may place a
// replacement of an at-most-once copy on a node last heard at lastSeen
// (the server's clock, when the last renewal arrived) with lease: the
// lease stretched by both clocks' drift, plus the agent's stop grace, plus
// Margin. Never earlier.
func ServerReplaceAfter(p Params, lastSeen time.Time, lease, grace time.Duration) time.Time {
	return lastSeen.Add(scale(lease, 1+2*p.Drift) + grace + p.Margin)
}

// Check refuses parameters the arithmetic is not sound for.
func (p Params) Check() error {
	switch {
	case p.Drift < 0 || p.Drift >= 0.5:
		return fmt.Errorf("lease drift must be in [0, 0.5), got %g", p.Drift)
	case p.Margin < 0:
		return fmt.Errorf("lease margin must not be negative, got %s", p.Margin)
	}
	return nil
}

func scale(d time.Duration, f float64) time.Duration { return time.Duration(float64(d) * f) }
