package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestDisruption(t *testing.T) {
	tests := []struct {
		block string
		want  *api.DisruptionPolicy
	}{
		{"", nil}, // the default: internal/disruption.DefaultMaxUnavailable
		{"      disruption:\n", nil},
		{"      disruption: {maxUnavailable: 0}\n", &api.DisruptionPolicy{MaxUnavailable: 0}},
		{"      disruption: {maxUnavailable: 3}\n", &api.DisruptionPolicy{MaxUnavailable: 3}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.block), func(t *testing.T) {
			equal(t, "disruption", mustParse(t, oneTask(cmd)+tt.block).Groups[0].Disruption, tt.want)
		})
	}
}

func TestDisruptionErrors(t *testing.T) {
	tests := []struct {
		name, block, path, message string
	}{
		{"negative", "{maxUnavailable: -1}", "spec.groups[0].disruption.maxUnavailable", "must be 0 or more"},
		{"too large", "{maxUnavailable: 2000000}", "spec.groups[0].disruption.maxUnavailable", "at most"},
		{"not a number", "{maxUnavailable: all}", "spec.groups[0].disruption.maxUnavailable", ""},
		{"missing", "{}", "spec.groups[0].disruption.maxUnavailable", "required"},
		{"unknown field", "{maxUnavailable: 1, maxSurge: 1}", "spec.groups[0].disruption.maxSurge", "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(oneTask(cmd) + "      disruption: " + tt.block + "\n"))
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error %v, want *spec.Errors", err)
			}
			if got := errs.Paths(); !slices.Equal(got, []string{tt.path}) {
				t.Fatalf("paths %q, want %q: %v", got, tt.path, err)
			}
			if !strings.Contains(errs.List[0].Message, tt.message) {
				t.Fatalf("message %q, want %q", errs.List[0].Message, tt.message)
			}
		})
	}
}

func TestSystemPriorityClass(t *testing.T) {
	w := mustParse(t, strings.Replace(oneTask(cmd), "  groups:", "  priorityClass: system\n  groups:", 1))
	if w.PriorityClass != api.PrioritySystem || w.Priority != 2000 {
		t.Fatalf("class %q priority %d, want system 2000", w.PriorityClass, w.Priority)
	}
}
