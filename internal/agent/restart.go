package agent

import (
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/backoff"
)

// defaultRestartDelay is the first backoff when a policy sets none: a task
// that always exits at once must not spin.
const defaultRestartDelay = time.Second

// restartDecision is what to do after a task ended.
type restartDecision struct {
	Restart bool
	Delay   time.Duration // before the restart
	Failed  bool          // when not restarting: the task failed
}

// decideRestart applies policy to a task that ended with res after
// restarts earlier restarts. Modes: never; on-failure (the default) restarts
// failures up to Attempts times; always restarts any exit up to Attempts
// times, 0 meaning without limit.
func decideRestart(policy api.RestartPolicy, res *drivers.ExitResult, restarts int) restartDecision {
	success := res.Successful()
	var restart bool
	switch policy.Mode {
	case api.RestartNever:
	case api.RestartAlways:
		restart = policy.Attempts == 0 || restarts < policy.Attempts
	default: // on-failure
		restart = !success && restarts < policy.Attempts
	}
	if !restart {
		return restartDecision{Failed: !success}
	}
	return restartDecision{Restart: true, Delay: restartDelay(policy, restarts)}
}

// restartDelay is Delay doubled per earlier restart, capped at MaxDelay:
// the delay the policy states, without jitter.
func restartDelay(policy api.RestartPolicy, restarts int) time.Duration {
	d := policy.Delay
	if d <= 0 {
		d = defaultRestartDelay
	}
	return backoff.Exp(d, policy.MaxDelay, restarts)
}
