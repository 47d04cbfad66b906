package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

func TestUpdateBlock(t *testing.T) {
	w := mustParse(t, oneTask(cmd)+"      replicas: 4\n      update: {maxParallel: 2, minHealthyTime: 5s, healthyDeadline: 1m, progressDeadline: 0s, canary: 1, autoPromote: true, autoRevert: true, stagger: 2s}\n")
	equal(t, "update", w.Groups[0].Update, &api.UpdatePolicy{MaxParallel: 2, MinHealthyTime: 5 * time.Second,
		HealthyDeadline: time.Minute, Canary: 1, AutoPromote: true, AutoRevert: true, Stagger: 2 * time.Second})
	partial := mustParse(t, oneTask(cmd)+"      update: {autoRevert: true}\n")
	want := api.DefaultUpdatePolicy()
	want.AutoRevert = true
	equal(t, "unwritten fields keep their defaults", partial.Groups[0].Update, &want)
}

func TestUpdateBlockErrors(t *testing.T) {
	const p = "spec.groups[0].update."
	tests := []struct {
		name  string
		group string
		paths []string
		msg   string
	}{
		{"negative and out of range", "      update: {maxParallel: 0, canary: -1, minHealthyTime: -1s, stagger: soon}\n",
			[]string{p + "maxParallel", p + "canary", p + "minHealthyTime", p + "stagger"}, "must be between 1 and"},
		{"canary larger than replicas", "      replicas: 2\n      update: {canary: 3}\n", []string{p + "canary"}, "must not exceed the group's replicas (2)"},
		{"deadline not longer than minHealthyTime", "      update: {minHealthyTime: 1m, healthyDeadline: 30s}\n",
			[]string{p + "healthyDeadline"}, "must be longer than minHealthyTime"},
		{"minHealthyTime above the default deadline", "      update: {minHealthyTime: 10m}\n",
			[]string{p + "minHealthyTime"}, "must be longer than minHealthyTime"},
		{"progress deadline shorter than healthy deadline", "      update: {healthyDeadline: 5m, progressDeadline: 1m}\n",
			[]string{p + "progressDeadline"}, "at least healthyDeadline"},
		{"autoPromote without canaries", "      update: {autoPromote: true}\n", []string{p + "autoPromote"}, "needs canary"},
		{"unknown field", "      update: {maxSurge: 1}\n", []string{p + "maxSurge"}, "unknown field"},
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
