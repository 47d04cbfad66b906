package rollout

import (
	"time"

	"github.com/strata-dev/strata/api"
)

// Slot is one replica index of a group that still runs an older spec.
type Slot struct {
	// Old is the live allocation of the older spec.
	Old *api.Allocation
	// New is the live allocation of the current spec for the index, nil
	// when none runs.
	New *api.Allocation
	// Failed is the newest replacement of the current spec that died and
	// was not replaced yet, nil when none.
	Failed *api.Allocation
}

// started reports whether the slot's replacement was ever placed.
func (s Slot) started() bool { return s.New != nil || s.Failed != nil }

// Group is what Decide reads about one group under a rolling update.
type Group struct {
	Policy   api.UpdatePolicy
	Replicas int
	// MaxUnavailable is the group's disruption budget
	// (disruption.MaxUnavailable: its disruption.maxUnavailable, default
	// 1). With MaxParallel it bounds the stops: the stricter wins. Zero,
	// the strictest, stops an old copy only while the group keeps Replicas
	// healthy allocations without it.
	MaxUnavailable int
	// Slots are the indices that still run an older spec, ascending.
	Slots []Slot
	// HealthyOthers counts the group's healthy allocations outside Slots
	// (current spec, no old copy beside them): they count towards the
	// floor of Replicas − MaxParallel.
	HealthyOthers int
	// Promoted: canaries were promoted (by hand or automatically before).
	Promoted bool
	// LastPlaced is when the group's newest replacement was placed (for
	// stagger); zero when none.
	LastPlaced time.Time
	// Halted: the deployment failed or was cancelled; nothing more is
	// replaced (what runs stays).
	Halted bool
}

// Action is Decide's verdict on one slot.
type Action int

const (
	// Wait keeps the old allocation and places nothing.
	Wait Action = iota
	// StopOld stops the old allocation: its replacement is healthy.
	StopOld
	// Place places a replacement beside the old allocation (after a
	// failed one, when the reschedule policy allows).
	Place
)

// Decision says what to do with each slot of a Group.
type Decision struct {
	Actions []Action // one per slot
	// Promoted is set when the canaries are promoted by this decision or
	// were before.
	Promoted bool
	// LookAgain, when set, is when a verdict changes by the clock alone.
	LookAgain time.Time
}

func (d *Decision) lookAgainAt(t time.Time) {
	if !t.IsZero() && (d.LookAgain.IsZero() || t.Before(d.LookAgain)) {
		d.LookAgain = t
	}
}

// Decide is the rolling update of one group at time now. Its rules:
//   - an old allocation stops only when the replacement beside it is
//     healthy, the canaries (if any) are promoted, and the group keeps at
//     least Replicas − min(MaxParallel, MaxUnavailable) healthy
//     allocations after the stop (Floor);
//   - at most MaxParallel replacements are in flight (placed or failed,
//     not yet healthy), and a new one is placed no sooner than Stagger
//     after the previous one;
//   - before promotion, only Canary replacements are placed, all at once,
//     and no old allocation stops; AutoPromote promotes once every canary
//     is healthy.
func Decide(g Group, now time.Time) Decision {
	p := g.Policy
	dec := Decision{Actions: make([]Action, len(g.Slots)), Promoted: g.Promoted || p.Canary == 0}
	if g.Halted {
		return dec
	}
	health := make([]Health, len(g.Slots))
	healthy, inFlight, started, canariesHealthy := g.HealthyOthers, 0, 0, 0
	for i, s := range g.Slots {
		if s.Old.ClientStatus == api.AllocRunning {
			healthy++
		}
		if s.started() {
			started++
		}
		if s.New == nil {
			if s.Failed != nil {
				inFlight++
			}
			continue
		}
		h, until := AllocHealth(s.New, p, now)
		health[i] = h
		dec.lookAgainAt(until)
		if h == Healthy {
			healthy++
			canariesHealthy++
		} else {
			inFlight++
		}
	}
	if !dec.Promoted && p.AutoPromote && started >= p.Canary && canariesHealthy >= p.Canary {
		dec.Promoted = true
	}

	floor := Floor(g)
	if dec.Promoted {
		for i := range g.Slots {
			if health[i] == Healthy && healthy-1 >= floor {
				dec.Actions[i] = StopOld
				healthy--
			}
		}
	}

	budget := p.MaxParallel - inFlight
	if !dec.Promoted {
		budget = p.Canary - started
	}
	next := g.LastPlaced.Add(p.Stagger)
	for i, s := range g.Slots {
		switch {
		case s.New != nil:
		case s.Failed != nil:
			dec.Actions[i] = Place // already in flight: a re-placement spends no budget
		case budget <= 0:
		case p.Stagger > 0 && !g.LastPlaced.IsZero() && now.Before(next):
			dec.lookAgainAt(next)
			budget = 0
		default:
			dec.Actions[i] = Place
			budget--
			if p.Stagger > 0 {
				budget = 0 // one per stagger
			}
		}
	}
	return dec
}

// Floor is how many healthy allocations g keeps through its update: its
// replicas less the stricter of maxParallel and its disruption budget.
// Replacements are placed beside the old copies, so stopping an old copy
// whose replacement is healthy leaves every replica served; the floor
// guards the rest (old copies that crashed, replacements that died after
// turning healthy).
func Floor(g Group) int {
	return g.Replicas - max(0, min(g.Policy.MaxParallel, g.MaxUnavailable))
}
