package sizing

import (
	"fmt"
	"math"

	"github.com/strata-dev/strata/internal/sim"
)

// PodPlot charts one pod's usage against the limit each policy kept in
// force, over hours since its first sample (warm-up: no limit drawn).
func PodPlot(pod string, runs ...PodResult) *sim.Plot {
	p := &sim.Plot{Width: 900, Height: 320, Title: "pod " + short(pod) + ": usage against the limit in force",
		X: sim.Axis{Label: "hours since the pod's first sample", Max: 1}, Y: sim.Axis{Label: "share of the hand-set limit", Max: 0.1}}
	if len(runs) == 0 || len(runs[0].Times) == 0 {
		return p
	}
	t0 := runs[0].Times[0]
	usage := sim.Line{Label: "usage", Color: sim.ColorUsage}
	for i, t := range runs[0].Times {
		h := float64(t-t0) / 3600
		usage.Points = append(usage.Points, [2]float64{h, runs[0].Usage[i]})
		p.X.Max = math.Max(p.X.Max, h)
		p.Y.Max = math.Max(p.Y.Max, runs[0].Usage[i])
	}
	p.Lines = append(p.Lines, usage)
	palette := []sim.Line{{Color: sim.ColorLimit}, {Color: sim.ColorBaseline}, {Color: sim.ColorBreach}}
	for k, r := range runs {
		l := palette[k%len(palette)]
		l.Label = fmt.Sprintf("limit, %s (%d breach(es))", r.Policy, r.Breaches)
		for i, t := range r.Times {
			if math.IsNaN(r.Limit[i]) {
				continue
			}
			l.Points = append(l.Points, [2]float64{float64(t-t0) / 3600, r.Limit[i]})
			p.Y.Max = math.Max(p.Y.Max, r.Limit[i])
		}
		p.Lines = append(p.Lines, l)
	}
	return p
}

func short(pod string) string {
	if len(pod) > 12 {
		return pod[:12]
	}
	return pod
}
