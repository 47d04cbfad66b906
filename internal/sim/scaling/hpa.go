package scaling

import (
	"fmt"
	"math"

	"github.com/strata-dev/strata/internal/autopilot/horizontal"
)

// BaselineName is the baseline's row name.
const BaselineName = "baseline"

// HPA is the Kubernetes Horizontal Pod Autoscaler's rule, the baseline, as
// its replica calculator and autoscaling/v2 default behaviour apply it to a
// per-pod metric (the busy share of a replica) every sync:
//
//   - the usage ratio is the ready replicas' mean busy share over the
//     target; replicas still starting have no metric and are set aside;
//   - with none starting, or a ratio at or under 1: no change while the
//     ratio is within the tolerance, else ⌈ratio × ready⌉ (= ⌈busy/target⌉);
//   - with some starting and a ratio over 1 (a scale-up), the starting ones
//     count as idle: no change if that ratio is within the tolerance or
//     turns the scale-up into a scale-down, else ⌈busy/target⌉;
//   - a scale-up adds at most max(4 replicas, 100 %) per sync (the default
//     scale-up policies, period 15 s); a scale-down takes the highest
//     recommendation of the scale-down window (its stabilisation window),
//     a sync that could not measure leaving no recommendation in it.
//
// The HPA cannot measure a group with no replica: at zero it scales to one
// when work arrives (the activation KEDA and the HPAScaleToZero gate add),
// and to zero only when min is zero.
type HPA struct {
	Min, Max        int
	Target          float64 // busy share, default 0.7
	Tolerance       float64 // default 0.1
	ScaleDownWindow int64   // seconds, default 300

	recent []recommendation
}

type recommendation struct {
	at      int64
	desired int
}

// NewHPA is the HPA rule with the Kubernetes defaults the issue names.
func NewHPA(minReplicas, maxReplicas int) *HPA {
	return &HPA{Min: minReplicas, Max: maxReplicas, Target: 0.7, Tolerance: 0.1, ScaleDownWindow: 300}
}

func (h *HPA) Name() string { return BaselineName }

func (h *HPA) Decide(t horizontal.Telemetry) horizontal.Decision {
	current := t.Ready + t.Starting
	desired, why, measured := h.recommend(t, current)
	final := desired
	if measured {
		// The scale-down window: the highest recommendation of its span wins.
		h.recent = append(h.recent, recommendation{at: t.Now, desired: desired})
		keep := h.recent[:0]
		for _, r := range h.recent {
			if t.Now-r.at <= h.ScaleDownWindow {
				keep = append(keep, r)
				final = max(final, r.desired)
			}
		}
		h.recent = keep
	}
	switch {
	case desired > current:
		final = min(desired, max(2*current, current+4))
	case final > desired:
		final = min(final, current)
		if final > desired {
			why += fmt.Sprintf("; held at %d by the %ds scale-down window", final, h.ScaleDownWindow)
		}
	}
	final = max(h.Min, min(h.Max, final))
	return horizontal.Decision{Replicas: final, Source: horizontal.SourceReactive, Reactive: desired, Reason: why}
}

// recommend is the replica calculator's answer for this sync, and whether
// it measured anything (a sync that did not leaves the window alone).
func (h *HPA) recommend(t horizontal.Telemetry, current int) (int, string, bool) {
	if current == 0 {
		if t.InFlight > 0 {
			return 1, "work arrived at zero replicas: activate one", true
		}
		return 0, "no replica and no work", true
	}
	util, ok := t.Utilisation()
	if !ok || t.Ready == 0 {
		return current, "no ready replica to measure: hold", false
	}
	busy := util * float64(t.Ready)
	ratio := util / h.Target
	need := int(math.Ceil(busy/h.Target - 1e-9))
	if t.Starting == 0 || ratio <= 1 {
		if math.Abs(ratio-1) <= h.Tolerance {
			return current, fmt.Sprintf("ready replicas %.0f%% busy, within %.0f%% of the %.0f%% target", 100*util, 100*h.Tolerance, 100*h.Target), true
		}
		return need, fmt.Sprintf("%.2f busy replicas at a %.0f%% target", busy, 100*h.Target), true
	}
	// A scale-up with replicas starting: they count as idle.
	diluted := busy / (float64(current) * h.Target)
	if math.Abs(diluted-1) <= h.Tolerance || diluted < 1 {
		return current, fmt.Sprintf("%.2f busy replicas: the %d starting cover the %.0f%% target", busy, t.Starting, 100*h.Target), true
	}
	return need, fmt.Sprintf("%.2f busy replicas at a %.0f%% target (%d starting counted idle)", busy, 100*h.Target, t.Starting), true
}
