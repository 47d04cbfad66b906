package agent

import (
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

func TestDecideRestart(t *testing.T) {
	ok := &drivers.ExitResult{}
	fail := &drivers.ExitResult{ExitCode: 1}
	oom := &drivers.ExitResult{ExitCode: 137, Signal: 9, OOMKilled: true}
	onFailure := api.RestartPolicy{Mode: api.RestartOnFailure, Attempts: 2, Delay: time.Second, MaxDelay: 3 * time.Second}
	always := api.RestartPolicy{Mode: api.RestartAlways, Delay: time.Second}
	for _, tc := range []struct {
		name     string
		policy   api.RestartPolicy
		res      *drivers.ExitResult
		restarts int
		want     restartDecision
	}{
		{"never success", api.RestartPolicy{Mode: api.RestartNever}, ok, 0, restartDecision{}},
		{"never failure", api.RestartPolicy{Mode: api.RestartNever}, fail, 0, restartDecision{Failed: true}},
		{"on-failure success is done", onFailure, ok, 0, restartDecision{}},
		{"on-failure first restart", onFailure, fail, 0, restartDecision{Restart: true, Delay: time.Second}},
		{"on-failure second restart doubles", onFailure, oom, 1, restartDecision{Restart: true, Delay: 2 * time.Second}},
		{"on-failure attempts used", onFailure, fail, 2, restartDecision{Failed: true}},
		{"default mode is on-failure", api.RestartPolicy{Attempts: 1}, fail, 0, restartDecision{Restart: true, Delay: defaultRestartDelay}},
		{"always restarts success", always, ok, 5, restartDecision{Restart: true, Delay: 32 * time.Second}},
		{"always with attempts used, success", api.RestartPolicy{Mode: api.RestartAlways, Attempts: 1}, ok, 1, restartDecision{}},
		{"always with attempts used, failure", api.RestartPolicy{Mode: api.RestartAlways, Attempts: 1}, fail, 1, restartDecision{Failed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decideRestart(tc.policy, tc.res, tc.restarts); got != tc.want {
				t.Errorf("decideRestart = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBackoffCapped(t *testing.T) {
	p := api.RestartPolicy{Delay: 100 * time.Millisecond, MaxDelay: 300 * time.Millisecond}
	want := []time.Duration{100, 200, 300, 300, 300}
	for i, w := range want {
		if got := restartDelay(p, i); got != w*time.Millisecond {
			t.Errorf("restartDelay(%d) = %s, want %s", i, got, w*time.Millisecond)
		}
	}
}
