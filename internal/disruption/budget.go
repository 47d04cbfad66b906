package disruption

import "github.com/strata-dev/strata/api"

// DefaultMaxUnavailable is the budget of a group without a disruption
// block: one replica at a time, as Nomad's migrate.max_parallel.
const DefaultMaxUnavailable = 1

// MaxUnavailable is tg's budget: its disruption block, or the default.
func MaxUnavailable(tg *api.TaskGroup) int {
	if tg == nil || tg.Disruption == nil {
		return DefaultMaxUnavailable
	}
	return max(0, tg.Disruption.MaxUnavailable)
}

// Group is one group as the rule sees it. Counts are of replicas (slots),
// not allocations: a replica whose old and new allocation both run is
// one replica.
type Group struct {
	// Desired is how many replicas the group wants.
	Desired int
	// MaxUnavailable is the group's budget (MaxUnavailable).
	MaxUnavailable int
	// Serving counts replicas served by a running allocation, a moving
	// one included while it still runs.
	Serving int
	// Moving counts replicas whose voluntary move is under way: the
	// allocation being moved is still live and its replacement does not
	// serve yet.
	Moving int
}

// Unavailable is how many replicas do not serve, for whatever reason.
func (g Group) Unavailable() int { return max(0, g.Desired-min(g.Serving, g.Desired)) }

// Allowed is how many more replicas of g may start a voluntary move now.
// A move in flight is charged as if its replica were already down (it may
// end with its old allocation stopped before its replacement serves), and
// so is every replica that does not serve: at most MaxUnavailable replicas
// are ever down or moving because of the cell's own choices, and none
// move while the group is already short by its budget.
func Allowed(g Group) int {
	return max(0, g.MaxUnavailable-g.Unavailable()-max(0, g.Moving))
}
