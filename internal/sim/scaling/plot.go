package scaling

import (
	"fmt"
	"math"
	"time"

	"github.com/strata-dev/strata/internal/sim"
)

// plotBucket is the width of a point of the week plot: the highest value
// of its minutes.
const plotBucket = 10 * 60

// WeekPlot charts the work in flight against the replicas each scaler kept
// over the week [from, from + 7 days), each point the highest of 10
// minutes, over hours since from. Results must come from replays of the
// same requests.
func WeekPlot(from int64, results ...*Result) *sim.Plot {
	to := from + 7*86400
	p := &sim.Plot{Width: 1200, Height: 560,
		Title: fmt.Sprintf("work in flight and replicas, week from %s", time.Unix(from, 0).UTC().Format("Mon 2006-01-02 15:04 UTC")),
		X:     sim.Axis{Label: "hours since the week's start", Max: 168}, Y: sim.Axis{Label: "requests in flight / replicas", Max: 1}}
	if len(results) == 0 {
		return p
	}
	demand := sim.Line{Label: "requests in flight", Color: sim.ColorUsage}
	palette := []sim.Line{{Color: sim.ColorLimit}, {Color: sim.ColorBaseline}, {Color: sim.ColorBreach}}
	lines := make([]sim.Line, len(results))
	for k, r := range results {
		lines[k] = palette[k%len(palette)]
		lines[k].Label = fmt.Sprintf("replicas, %s", r.Row.Policy)
	}
	bucket := func(ms []Minute, get func(Minute) int) [][2]float64 {
		var out [][2]float64
		cur, best := int64(-1), 0
		for _, m := range ms {
			if m.Time < from || m.Time >= to {
				continue
			}
			b := (m.Time - from) / plotBucket
			if b != cur && cur >= 0 {
				out = append(out, [2]float64{float64(cur*plotBucket) / 3600, float64(best)})
				best = 0
			}
			cur, best = b, max(best, get(m))
		}
		if cur >= 0 {
			out = append(out, [2]float64{float64(cur*plotBucket) / 3600, float64(best)})
		}
		return out
	}
	demand.Points = bucket(results[0].Minutes, func(m Minute) int { return m.InFlight })
	for k, r := range results {
		lines[k].Points = bucket(r.Minutes, func(m Minute) int { return m.Replicas })
	}
	for _, l := range append([]sim.Line{demand}, lines...) {
		for _, pt := range l.Points {
			p.Y.Max = math.Max(p.Y.Max, pt[1])
		}
	}
	p.Lines = append([]sim.Line{demand}, lines...)
	return p
}
