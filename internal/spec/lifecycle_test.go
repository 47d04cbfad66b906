package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

func TestLifecycleDefaults(t *testing.T) {
	general := &api.ReschedulePolicy{Attempts: 3, Interval: time.Hour, Delay: 5 * time.Second,
		DelayFunction: api.DelayExponential, MaxDelay: 5 * time.Minute}
	never := *general
	never.Attempts = 0
	tests := []struct {
		name           string
		group          string
		wantReschedule *api.ReschedulePolicy
		wantDisconnect *api.DisconnectPolicy
		wantAtMostOnce bool
	}{
		{"nothing written", "", general, &api.DisconnectPolicy{Replace: true, Reconcile: api.KeepReplacement}, false},
		{"restart never disables rescheduling", "      restartPolicy: {mode: never}\n", &never,
			&api.DisconnectPolicy{Replace: true, Reconcile: api.KeepReplacement}, false},
		{"a block under restart never starts from the general defaults", "      restartPolicy: {mode: never}\n      reschedule: {delay: 1m}\n",
			&api.ReschedulePolicy{Attempts: 3, Interval: time.Hour, Delay: time.Minute, DelayFunction: api.DelayExponential, MaxDelay: 5 * time.Minute},
			&api.DisconnectPolicy{Replace: true, Reconcile: api.KeepReplacement}, false},
		{"delay above the default max raises it", "      reschedule: {delay: 10m, delayFunction: fibonacci}\n",
			&api.ReschedulePolicy{Attempts: 3, Interval: time.Hour, Delay: 10 * time.Minute, DelayFunction: api.DelayFibonacci, MaxDelay: 10 * time.Minute},
			&api.DisconnectPolicy{Replace: true, Reconcile: api.KeepReplacement}, false},
		{"unlimited", "      reschedule: {unlimited: true, delay: 30s, maxDelay: 1h}\n",
			&api.ReschedulePolicy{Attempts: 3, Interval: time.Hour, Delay: 30 * time.Second, DelayFunction: api.DelayExponential, MaxDelay: time.Hour, Unlimited: true},
			&api.DisconnectPolicy{Replace: true, Reconcile: api.KeepReplacement}, false},
		{"disconnect written", "      disconnect: {lostAfter: 5m, replace: false, stopAfter: 1m}\n", general,
			&api.DisconnectPolicy{LostAfter: 5 * time.Minute, Replace: false, Reconcile: api.KeepReplacement, StopAfter: time.Minute}, false},
		{"at most once never replaces while unknown", "      atMostOnce: true\n", general,
			&api.DisconnectPolicy{Replace: false, Reconcile: api.KeepOriginal}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustParse(t, oneTask(cmd)+tt.group).Groups[0]
			equal(t, "reschedule", g.Reschedule, tt.wantReschedule)
			equal(t, "disconnect", g.Disconnect, tt.wantDisconnect)
			equal(t, "atMostOnce", g.AtMostOnce, tt.wantAtMostOnce)
		})
	}
}

func TestLifecycleErrors(t *testing.T) {
	const p = "spec.groups[0]."
	tests := []struct {
		name  string
		group string
		paths []string
		msg   string
	}{
		{"bad types and ranges", "      reschedule: {attempts: -1, interval: soon, delay: -5s, delayFunction: linear, maxDelay: 200h, unlimited: maybe}\n",
			[]string{p + "reschedule.attempts", p + "reschedule.interval", p + "reschedule.delay", p + "reschedule.delayFunction", p + "reschedule.maxDelay", p + "reschedule.unlimited"},
			"must be between 0 and 1000000, got -1"},
		{"unlimited with attempts", "      reschedule: {unlimited: true, attempts: 5, interval: 1h}\n",
			[]string{p + "reschedule.attempts", p + "reschedule.interval"}, "unlimited ignores attempts"},
		{"unlimited without delay", "      reschedule: {unlimited: true, delay: 0s}\n", []string{p + "reschedule.delay"}, "tight loop"},
		{"max delay below delay", "      reschedule: {delay: 1m, maxDelay: 10s}\n", []string{p + "reschedule.maxDelay"}, "must not be shorter than delay (1m)"},
		{"zero interval", "      reschedule: {attempts: 2, interval: 0s}\n", []string{p + "reschedule.interval"}, "greater than zero"},
		{"unknown field", "      reschedule: {tries: 2}\n", []string{p + "reschedule.tries"}, "unknown field"},
		{"bad disconnect", "      disconnect: {lostAfter: forever, reconcile: best, stopAfter: -1s}\n",
			[]string{p + "disconnect.lostAfter", p + "disconnect.reconcile", p + "disconnect.stopAfter"}, "invalid duration"},
		{"replace false without lostAfter", "      disconnect: {replace: false}\n", []string{p + "disconnect.replace"}, "needs lostAfter"},
		{"at most once with replace", "      atMostOnce: true\n      disconnect: {lostAfter: 1m, replace: true}\n",
			[]string{p + "disconnect.replace"}, "never replaced while its copy may still run"},
		{"at most once not a boolean", "      atMostOnce: yes please\n", []string{p + "atMostOnce"}, "true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(oneTask(cmd) + tt.group))
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Parse error = %v, want *spec.Errors", err)
			}
			if got := errs.Paths(); !slices.Equal(got, tt.paths) {
				t.Fatalf("error paths = %q, want %q\n%v", got, tt.paths, err)
			}
			if !strings.Contains(errs.List[0].Message, tt.msg) {
				t.Errorf("first message = %q, want it to contain %q", errs.List[0].Message, tt.msg)
			}
		})
	}
}
