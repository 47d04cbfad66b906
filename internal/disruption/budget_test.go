package disruption

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

func TestAllowed(t *testing.T) {
	tests := []struct {
		name string
		g    Group
		want int
	}{
		{"all serving, budget one", Group{Desired: 5, MaxUnavailable: 1, Serving: 5}, 1},
		{"all serving, budget three", Group{Desired: 5, MaxUnavailable: 3, Serving: 5}, 3},
		{"one move in flight spends the budget", Group{Desired: 5, MaxUnavailable: 1, Serving: 5, Moving: 1}, 0},
		{"one down already spends it", Group{Desired: 5, MaxUnavailable: 1, Serving: 4}, 0},
		{"down and moving add up", Group{Desired: 5, MaxUnavailable: 3, Serving: 4, Moving: 1}, 1},
		{"budget zero forbids moves", Group{Desired: 3, MaxUnavailable: 0, Serving: 3}, 0},
		{"more down than the budget", Group{Desired: 3, MaxUnavailable: 1, Serving: 0}, 0},
		{"budget above the group", Group{Desired: 2, MaxUnavailable: 10, Serving: 2}, 10},
		{"extra serving copies count once", Group{Desired: 2, MaxUnavailable: 1, Serving: 4}, 1},
		{"no replicas", Group{Desired: 0, MaxUnavailable: 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Allowed(tt.g); got != tt.want {
				t.Fatalf("Allowed(%+v) = %d, want %d", tt.g, got, tt.want)
			}
		})
	}
}

func TestMaxUnavailable(t *testing.T) {
	tests := []struct {
		name string
		tg   *api.TaskGroup
		want int
	}{
		{"no group", nil, DefaultMaxUnavailable},
		{"no block", &api.TaskGroup{}, DefaultMaxUnavailable},
		{"zero", &api.TaskGroup{Disruption: &api.DisruptionPolicy{MaxUnavailable: 0}}, 0},
		{"four", &api.TaskGroup{Disruption: &api.DisruptionPolicy{MaxUnavailable: 4}}, 4},
		{"negative (never validated) is zero", &api.TaskGroup{Disruption: &api.DisruptionPolicy{MaxUnavailable: -2}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MaxUnavailable(tt.tg); got != tt.want {
				t.Fatalf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// TestPropertyVoluntaryDisruptionWithinBudget drives a model group through
// random events — a caller starting every move Allowed permits, moves
// that stop their old replica before the replacement serves (the worst
// case), replacements that come up, replicas that crash and recover — and
// checks that the replicas down because of voluntary moves never exceed
// maxUnavailable, and that no move starts while the group is down by its
// budget or more.
func TestPropertyVoluntaryDisruptionWithinBudget(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		desired := rapid.IntRange(0, 20).Draw(t, "desired")
		budget := rapid.IntRange(0, 5).Draw(t, "maxUnavailable")
		// Each replica: serving, crashed (involuntary), or in one of a
		// move's two phases: old still serving, or old stopped.
		const (
			up = iota
			crashed
			movingUp
			movingDown
		)
		replicas := make([]int, desired)
		for step := range 60 {
			g := Group{Desired: desired, MaxUnavailable: budget}
			for _, r := range replicas {
				switch r {
				case up, movingUp:
					g.Serving++
				}
				if r == movingUp || r == movingDown {
					g.Moving++
				}
			}
			allowed := Allowed(g)
			if allowed > 0 && g.Unavailable() >= budget {
				t.Fatalf("step %d: %d allowed with %d unavailable, budget %d", step, allowed, g.Unavailable(), budget)
			}
			// The caller starts as many moves as allowed, of replicas that serve.
			for i := range replicas {
				if allowed == 0 {
					break
				}
				if replicas[i] == up {
					replicas[i] = movingUp
					allowed--
				}
			}
			for i := range replicas {
				switch rapid.IntRange(0, 5).Draw(t, "event") {
				case 0: // crash
					if replicas[i] == up {
						replicas[i] = crashed
					}
				case 1: // recovery, or a move's replacement serving
					replicas[i] = up
				case 2: // a move stops its old replica first
					if replicas[i] == movingUp {
						replicas[i] = movingDown
					}
				}
			}
			voluntary := 0
			for _, r := range replicas {
				if r == movingDown {
					voluntary++
				}
			}
			if voluntary > budget {
				t.Fatalf("step %d: %d replicas down because of moves, budget %d", step, voluntary, budget)
			}
		}
	})
}
