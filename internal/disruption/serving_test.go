package disruption

import (
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestServing(t *testing.T) {
	alloc := func(desired, client, health string) *api.Allocation {
		a := &api.Allocation{DesiredStatus: desired, ClientStatus: client}
		if health != "" {
			a.Health = &api.AllocHealth{Status: health}
		}
		return a
	}
	tests := []struct {
		name string
		a    *api.Allocation
		want bool
	}{
		{"none", nil, false},
		{"running, healthy", alloc(api.DesiredRun, api.AllocRunning, api.HealthHealthy), true},
		{"running, no health reported (simulator, fake agents)", alloc(api.DesiredRun, api.AllocRunning, ""), true},
		{"running, readiness pending", alloc(api.DesiredRun, api.AllocRunning, api.HealthPending), false},
		{"running, unhealthy", alloc(api.DesiredRun, api.AllocRunning, api.HealthUnhealthy), false},
		{"pending", alloc(api.DesiredRun, api.AllocPending, ""), false},
		{"told to stop, still running and healthy", alloc(api.DesiredStop, api.AllocRunning, api.HealthHealthy), false},
		{"complete", alloc(api.DesiredRun, api.AllocComplete, ""), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Serving(tc.a); got != tc.want {
				t.Fatalf("Serving = %v, want %v", got, tc.want)
			}
		})
	}
}
