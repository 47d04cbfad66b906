package vertical

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Models a recommendation can come from.
const (
	ModelWarmingUp = "warming-up" // too little history: no recommendation
	ModelSteady    = "steady"     // peak over the steady window, a small margin, the rise allowance
	ModelBursty    = "bursty"     // peak over the long window, a margin that grows with the bursts
	ModelAfterOOM  = "after-oom"  // the floor a kill raised is above what the history says
)

// Bounds a recommendation can be held at.
const (
	BoundMin = "minAllowed"
	BoundMax = "maxAllowed"
)

// Recommendation is a limit and why.
type Recommendation struct {
	Ready  bool          `json:"ready"`
	Limit  float64       `json:"limit"`
	Model  string        `json:"model"`
	Window time.Duration `json:"window,omitempty"`
	Peak   float64       `json:"peak"`   // highest usage over the window
	Margin float64       `json:"margin"` // share added to the peak
	Rise   float64       `json:"rise"`   // largest rise over the rise span seen in the rise window

	// KilledAt and Bump, for ModelAfterOOM: the limit of the latest kill
	// and the share it was raised by.
	KilledAt float64 `json:"killedAt,omitempty"`
	Bump     float64 `json:"bump,omitempty"`

	Burstiness  float64 `json:"burstiness"`
	OOMs        int     `json:"ooms"`
	KilledAtMax int     `json:"killedAtMax,omitempty"` // kills while at MaxAllowed: the task needs more than it may have
	Bound       string  `json:"bound,omitempty"`       // BoundMin or BoundMax when the limit is held there
	Reason      string  `json:"reason"`
}

// explain writes the reason a person reads in `strata recommendations`.
func (r *Recommendation) explain(cfg Config) string {
	var b strings.Builder
	switch r.Model {
	case ModelBursty:
		fmt.Fprintf(&b, "bursty (usage jumps by %.0f%% of its peak and falls back within %v): peak %s over %v + %.0f%%",
			100*r.Burstiness, cfg.BurstSpan, num(r.Peak), r.Window, 100*r.Margin)
	case ModelAfterOOM:
		fmt.Fprintf(&b, "held above the latest OOM kill (at %s): +%.0f%%, the bump doubling with each kill within %v of the previous; %d OOM kill(s) seen",
			num(r.KilledAt), 100*r.Bump, cfg.OOMMemory, r.OOMs)
	default:
		fmt.Fprintf(&b, "steady: peak %s over %v + %.0f%%", num(r.Peak), r.Window, 100*r.Margin)
	}
	if r.Model != ModelAfterOOM && r.Rise > 0 {
		fmt.Fprintf(&b, " + %.0f%% of the largest %v rise in %v (%s)", 100*cfg.RiseWeight, cfg.RiseSpan, cfg.RiseWindow, num(r.Rise))
	}
	if r.Model != ModelAfterOOM {
		fmt.Fprintf(&b, "; %d OOM kill(s) seen", r.OOMs)
	}
	switch r.Bound {
	case BoundMin:
		fmt.Fprintf(&b, "; raised to minAllowed %s", num(r.Limit))
	case BoundMax:
		fmt.Fprintf(&b, "; held at maxAllowed %s", num(r.Limit))
	}
	if r.KilledAtMax > 0 {
		fmt.Fprintf(&b, "; killed %d time(s) at maxAllowed: not resized again, raise maxAllowed or fix the task", r.KilledAtMax)
	}
	return b.String()
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
