package rollout

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func running(id string, since time.Time) *api.Allocation {
	return &api.Allocation{ID: id, DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning, ClientStatusTime: since, CreateTime: since}
}

func pending(id string, at time.Time) *api.Allocation {
	return &api.Allocation{ID: id, DesiredStatus: api.DesiredRun, ClientStatus: api.AllocPending, CreateTime: at}
}

func failed(id string, at time.Time) *api.Allocation {
	return &api.Allocation{ID: id, DesiredStatus: api.DesiredRun, ClientStatus: api.AllocFailed, ClientStatusTime: at, CreateTime: at}
}

func TestAllocHealth(t *testing.T) {
	p := api.UpdatePolicy{MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute}
	restarted := running("r", t0)
	restarted.TaskStates = map[string]*api.TaskState{"t": {StartedAt: t0.Add(55 * time.Second)}}
	withHealth := func(status string, since time.Time) *api.Allocation {
		a := running("h", t0)
		a.Health = &api.AllocHealth{Status: status, Since: since}
		return a
	}
	tests := []struct {
		name  string
		a     *api.Allocation
		now   time.Time
		want  Health
		until time.Time
	}{
		{"pending within deadline", pending("a", t0), t0.Add(30 * time.Second), Pending, t0.Add(time.Minute)},
		{"pending past deadline", pending("a", t0), t0.Add(time.Minute), Unhealthy, time.Time{}},
		{"running shorter than minHealthyTime", running("a", t0), t0.Add(5 * time.Second), Pending, t0.Add(10 * time.Second)},
		{"running long enough", running("a", t0), t0.Add(10 * time.Second), Healthy, time.Time{}},
		{"failed", failed("a", t0), t0.Add(time.Hour), Unhealthy, time.Time{}},
		{"a restart starts the count again, past the deadline", restarted, t0.Add(61 * time.Second), Unhealthy, time.Time{}},
		{"a restart starts the count again", restarted, t0.Add(56 * time.Second), Pending, t0.Add(time.Minute)},
		{"running but its readiness checks not yet passing", withHealth(api.HealthPending, t0), t0.Add(30 * time.Second), Pending, t0.Add(time.Minute)},
		{"running, never ready by the deadline", withHealth(api.HealthUnhealthy, t0), t0.Add(time.Minute), Unhealthy, time.Time{}},
		{"ready later than running: minHealthyTime counts from ready", withHealth(api.HealthHealthy, t0.Add(20*time.Second)), t0.Add(25 * time.Second), Pending, t0.Add(30 * time.Second)},
		{"ready for minHealthyTime", withHealth(api.HealthHealthy, t0.Add(20*time.Second)), t0.Add(30 * time.Second), Healthy, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, until := AllocHealth(tt.a, p, tt.now)
			if h != tt.want || !until.Equal(tt.until) {
				t.Fatalf("AllocHealth = %s until %v, want %s until %v", h, until, tt.want, tt.until)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	p := api.UpdatePolicy{MaxParallel: 1, MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute}
	now := t0.Add(time.Hour)
	old := func(i int) *api.Allocation { return running(fmt.Sprint("old", i), t0) }
	tests := []struct {
		name     string
		policy   func(p *api.UpdatePolicy)
		slots    []Slot
		promoted bool
		halted   bool
		want     []Action
		promote  bool
	}{
		{"first batch: one replacement beside the old", nil,
			[]Slot{{Old: old(0)}, {Old: old(1)}, {Old: old(2)}}, false, false, []Action{Place, Wait, Wait}, true},
		{"maxParallel 2", func(p *api.UpdatePolicy) { p.MaxParallel = 2 },
			[]Slot{{Old: old(0)}, {Old: old(1)}, {Old: old(2)}}, false, false, []Action{Place, Place, Wait}, true},
		{"replacement pending: old kept, nothing more placed", nil,
			[]Slot{{Old: old(0), New: pending("n0", now)}, {Old: old(1)}}, false, false, []Action{Wait, Wait}, true},
		{"replacement running but not for minHealthyTime", nil,
			[]Slot{{Old: old(0), New: running("n0", now.Add(-5*time.Second))}, {Old: old(1)}}, false, false, []Action{Wait, Wait}, true},
		{"replacement healthy: old stops, next placed", nil,
			[]Slot{{Old: old(0), New: running("n0", now.Add(-time.Minute))}, {Old: old(1)}}, false, false, []Action{StopOld, Place}, true},
		{"failed replacement is in flight: re-placed, nothing else", nil,
			[]Slot{{Old: old(0), Failed: failed("n0", now)}, {Old: old(1)}}, false, false, []Action{Place, Wait}, true},
		{"canaries placed at once, beside the old version", func(p *api.UpdatePolicy) { p.Canary = 2 },
			[]Slot{{Old: old(0)}, {Old: old(1)}, {Old: old(2)}}, false, false, []Action{Place, Place, Wait}, false},
		{"healthy canaries wait for promotion", func(p *api.UpdatePolicy) { p.Canary = 1 },
			[]Slot{{Old: old(0), New: running("n0", t0)}, {Old: old(1)}}, false, false, []Action{Wait, Wait}, false},
		{"auto-promoted once every canary is healthy", func(p *api.UpdatePolicy) { p.Canary = 1; p.AutoPromote = true },
			[]Slot{{Old: old(0), New: running("n0", t0)}, {Old: old(1)}}, false, false, []Action{StopOld, Place}, true},
		{"promoted by hand", func(p *api.UpdatePolicy) { p.Canary = 1 },
			[]Slot{{Old: old(0), New: running("n0", t0)}, {Old: old(1)}}, true, false, []Action{StopOld, Place}, true},
		{"halted: nothing moves", nil,
			[]Slot{{Old: old(0), New: running("n0", t0)}, {Old: old(1)}}, false, true, []Action{Wait, Wait}, true},
		{"stagger holds the next batch", func(p *api.UpdatePolicy) { p.Stagger = time.Hour; p.MaxParallel = 3 },
			[]Slot{{Old: old(0), New: running("n0", now.Add(-time.Minute))}, {Old: old(1)}}, false, false, []Action{StopOld, Wait}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := p
			if tt.policy != nil {
				tt.policy(&pol)
			}
			g := Group{Policy: pol, Replicas: len(tt.slots), Slots: tt.slots, Promoted: tt.promoted, Halted: tt.halted}
			if pol.Stagger > 0 {
				g.LastPlaced = now.Add(-time.Minute)
			}
			dec := Decide(g, now)
			if fmt.Sprint(dec.Actions) != fmt.Sprint(tt.want) {
				t.Fatalf("actions = %v, want %v", dec.Actions, tt.want)
			}
			if dec.Promoted != tt.promote {
				t.Fatalf("promoted = %v, want %v", dec.Promoted, tt.promote)
			}
		})
	}
}

// TestDecideDisruptionBudget: the group's disruption budget and
// maxParallel both bound the stops; the stricter wins. Old copies 1 and 2
// crashed (pending a restart), so only old 0, old 3 and the replacement of
// 0 are healthy.
func TestDecideDisruptionBudget(t *testing.T) {
	now := t0.Add(time.Hour)
	slots := func() []Slot {
		return []Slot{
			{Old: running("old0", t0), New: running("n0", t0)},
			{Old: pending("old1", t0)},
			{Old: pending("old2", t0)},
			{Old: running("old3", t0)},
		}
	}
	tests := []struct {
		name                        string
		maxParallel, maxUnavailable int
		wantFloor                   int
		wantStop                    bool
	}{
		{"maxParallel 3 alone would stop old 0", 3, 3, 1, true},
		{"maxUnavailable 1 is stricter: old 0 stays", 3, 1, 3, false},
		{"maxParallel 1 is stricter than maxUnavailable 3", 1, 3, 3, false},
		{"maxUnavailable 0: a full set of healthy copies is kept", 3, 0, 4, false},
		{"maxUnavailable 2 allows the stop", 3, 2, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := Group{Policy: api.UpdatePolicy{MaxParallel: tt.maxParallel, MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute},
				Replicas: 4, MaxUnavailable: tt.maxUnavailable, Slots: slots(), Promoted: true}
			if f := Floor(g); f != tt.wantFloor {
				t.Fatalf("Floor = %d, want %d", f, tt.wantFloor)
			}
			dec := Decide(g, now)
			if got := dec.Actions[0] == StopOld; got != tt.wantStop {
				t.Fatalf("old 0 stopped = %v, want %v (actions %v)", got, tt.wantStop, dec.Actions)
			}
			for i, act := range dec.Actions[1:] {
				if act == StopOld {
					t.Fatalf("slot %d without a healthy replacement stopped", i+1)
				}
			}
		})
	}
}

// TestPropertyRollingUpdateKeepsFloor drives Decide over a group with an
// injected clock while replacements start late, crash before they are
// healthy, or cannot be placed at all: the group's healthy count never
// falls below Replicas − min(MaxParallel, MaxUnavailable), and an update whose replacements
// all become healthy ends with no old allocation.
func TestPropertyRollingUpdateKeepsFloor(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		replicas := rapid.IntRange(1, 8).Draw(rt, "replicas")
		p := api.UpdatePolicy{
			MaxParallel:     rapid.IntRange(1, replicas).Draw(rt, "maxParallel"),
			MinHealthyTime:  10 * time.Second,
			HealthyDeadline: time.Minute,
			Canary:          rapid.IntRange(0, replicas).Draw(rt, "canary"),
		}
		p.AutoPromote = p.Canary > 0
		maxUnavailable := rapid.IntRange(0, replicas).Draw(rt, "maxUnavailable")
		floor := replicas - min(p.MaxParallel, maxUnavailable)
		slots := make([]Slot, replicas)
		for i := range slots {
			slots[i].Old = running(fmt.Sprint("old", i), t0)
		}
		now, ids := t0.Add(time.Hour), 0
		// others are the replacements whose old copy was stopped: the
		// index runs only them.
		var others []*api.Allocation
		promoted := false
		healthyOf := func(as []*api.Allocation) int {
			n := 0
			for _, a := range as {
				if h, _ := AllocHealth(a, p, now); h == Healthy {
					n++
				}
			}
			return n
		}
		count := func() int {
			n := healthyOf(others)
			for _, s := range slots {
				if s.Old != nil && s.Old.ClientStatus == api.AllocRunning {
					n++
				}
				if s.New != nil {
					n += healthyOf([]*api.Allocation{s.New})
				}
			}
			return n
		}
		// crashOrStart moves a replacement that is not healthy yet: it
		// crashes, starts running, or stays as it is.
		crashOrStart := func(a *api.Allocation) *api.Allocation {
			if h, _ := AllocHealth(a, p, now); h != Pending {
				return a
			}
			switch rapid.IntRange(0, 4).Draw(rt, "event") {
			case 0:
				return failed(a.ID, now)
			case 1, 2:
				if a.ClientStatus == api.AllocPending {
					r := running(a.ID, now)
					r.CreateTime = a.CreateTime
					return r
				}
			}
			return a
		}
		for step := 0; step < 200 && len(slots) > 0; step++ {
			dec := Decide(Group{Policy: p, Replicas: replicas, MaxUnavailable: maxUnavailable, Slots: slots, HealthyOthers: healthyOf(others), Promoted: promoted}, now)
			promoted = dec.Promoted
			var kept []Slot
			for i, s := range slots {
				switch dec.Actions[i] {
				case StopOld:
					others = append(others, s.New)
					continue
				case Place:
					if rapid.IntRange(0, 9).Draw(rt, "placement fails") > 0 {
						ids++
						s.New, s.Failed = pending(fmt.Sprint("new", ids), now), nil
					}
				}
				kept = append(kept, s)
			}
			slots = kept
			if c := count(); c < floor {
				rt.Fatalf("step %d: %d healthy, below %d − min(maxParallel %d, maxUnavailable %d)", step, c, replicas, p.MaxParallel, maxUnavailable)
			}
			// The world moves: replacements start, or crash before they are healthy.
			for i := range others {
				others[i] = crashOrStart(others[i])
			}
			for i := range slots {
				s := &slots[i]
				if s.New == nil {
					continue
				}
				if a := crashOrStart(s.New); a.ClientStatus == api.AllocFailed {
					s.Failed, s.New = a, nil
				} else {
					s.New = a
				}
			}
			now = now.Add(time.Duration(rapid.IntRange(1, 20).Draw(rt, "seconds")) * time.Second)
		}
	})
}
