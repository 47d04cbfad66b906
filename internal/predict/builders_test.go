package predict

import (
	"fmt"
	"math/rand/v2"
)

// reading builds a Reading of day with signals set from pairs.
func reading(day int, pairs ...any) Reading {
	r := Reading{Day: day}
	for i := 0; i < len(pairs); i += 2 {
		r.Set(pairs[i].(Signal), toFloat(pairs[i+1]))
	}
	return r
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	panic(fmt.Sprintf("not a number: %v", v))
}

// fleetStream is a synthetic fleet: units of class "m", read daily from
// day 0 to days-1. A failing unit's reallocated-sector count starts to
// grow lead days before its failure day (its last reading); healthy units
// hold a static count (some of them a high one) and a few grow by one now
// and then. Power-on hours advance by 24 a day.
type fleetStream struct {
	units, days int
	failing     map[int]int // unit -> failure day
	lead        int
	seed        uint64
}

func (f fleetStream) source() Source {
	return func(yield func(Observation) bool) error {
		rng := rand.New(rand.NewPCG(f.seed, 7))
		base := make([]float64, f.units)
		for u := range base {
			if rng.IntN(10) == 0 {
				base[u] = float64(rng.IntN(500))
			}
		}
		for d := range f.days {
			for u := range f.units {
				fd, fails := f.failing[u]
				if fails && d > fd {
					continue
				}
				v := base[u]
				if fails && d >= fd-f.lead {
					v += float64(20 * (d - (fd - f.lead) + 1))
				} else if rng.IntN(400) == 0 {
					base[u]++
					v = base[u]
				}
				r := reading(d, SmartReallocated, v, SmartPowerOnHours, 1000+24*d, SmartPending, 0)
				if !yield(Observation{Unit: fmt.Sprintf("u%04d", u), Class: "m", Reading: r, Failed: fails && d == fd}) {
					return nil
				}
			}
		}
		return nil
	}
}

// failingEvery marks every k-th unit to fail, on days spread over
// [from, to].
func failingEvery(units, k, from, to int) map[int]int {
	out := map[int]int{}
	n := 0
	for u := 0; u < units; u += k {
		out[u] = from + n%(to-from+1)
		n++
	}
	return out
}
