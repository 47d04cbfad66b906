package scaling

import (
	"fmt"
	"math"

	"github.com/strata-dev/strata/internal/autopilot/horizontal"
)

// BaselineName is the baseline's row name.
const BaselineName = "baseline"

// HPA is the Kubernetes Horizontal Pod Autoscaler's rule, the baseline: on
// every sync, desired = ⌈busy replicas / target⌉ from the utilisation since
// the previous sync (replicas still starting count as idle, as the HPA
// counts not-yet-ready pods when it scales up), no change while the ratio to
// the target is within the tolerance, a scale-up at most doubles (or adds 4)
// per sync, and a scale-down takes the highest recommendation of the
// scale-down window. The HPA cannot measure a group with no replica: at
// zero it scales to one when work arrives (the activation KEDA and the
// HPAScaleToZero gate add), and to zero only when min is zero.
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
	desired, why := current, ""
	switch util, ok := t.Utilisation(); {
	case current == 0:
		desired, why = 0, "no replica and no work"
		if t.InFlight > 0 {
			desired, why = 1, "work arrived at zero replicas: activate one"
		}
	case !ok:
		why = "no ready replica to measure: hold"
	default:
		busy := util * float64(t.Ready)
		ratio := busy / (float64(current) * h.Target)
		if math.Abs(ratio-1) <= h.Tolerance {
			why = fmt.Sprintf("utilisation %.0f%% within %.0f%% of the %.0f%% target", 100*busy/float64(current), 100*h.Tolerance, 100*h.Target)
			break
		}
		desired = int(math.Ceil(busy/h.Target - 1e-9))
		why = fmt.Sprintf("%.2f busy replicas at a %.0f%% target", busy, 100*h.Target)
		if desired > current {
			desired = min(desired, max(2*current, current+4))
		}
	}
	// The scale-down window: the highest recommendation of its span wins.
	h.recent = append(h.recent, recommendation{at: t.Now, desired: desired})
	keep := h.recent[:0]
	final := desired
	for _, r := range h.recent {
		if t.Now-r.at <= h.ScaleDownWindow {
			keep = append(keep, r)
			final = max(final, r.desired)
		}
	}
	h.recent = keep
	if final > desired && desired < current {
		why += fmt.Sprintf("; held at %d by the %ds scale-down window", min(final, current), h.ScaleDownWindow)
	}
	if desired < current {
		final = min(final, current)
	} else {
		final = desired
	}
	final = max(h.Min, min(h.Max, final))
	return horizontal.Decision{Replicas: final, Source: horizontal.SourceReactive, Reactive: desired, Reason: why}
}
