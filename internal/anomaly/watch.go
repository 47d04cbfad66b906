package anomaly

import (
	"fmt"
	"time"
)

// Signal is one control-plane signal a Watch judges.
type Signal struct {
	// Name is the signal's name in events ("raft commit latency").
	Name string
	// Seconds: its values are durations in seconds (words them as such).
	Seconds bool
	Config  Config
}

// The control plane's signals: what each measures and how it is judged.
var (
	// RaftCommitLatency is a sample of raft's commit latency (e.g. the
	// mean or p99 over the sampling interval), in seconds.
	RaftCommitLatency = Signal{Name: "raft commit latency", Seconds: true, Config: Config{Transform: Log}}
	// EvaluationBacklog is the broker's ready evaluations.
	EvaluationBacklog = Signal{Name: "evaluation backlog", Config: Config{Transform: Sqrt}}
	// HeartbeatLateness is how late the latest heartbeats came past their
	// expected time (e.g. the p99 over the interval), in seconds.
	HeartbeatLateness = Signal{Name: "heartbeat lateness", Seconds: true, Config: Config{Transform: Log, Offset: 0.01}}
	// PlacementFailures counts the placements that failed in the interval.
	PlacementFailures = Signal{Name: "placement failures", Config: Config{Transform: Sqrt}}
)

// ControlPlane lists the signals a server watches.
func ControlPlane() []Signal {
	return []Signal{RaftCommitLatency, EvaluationBacklog, HeartbeatLateness, PlacementFailures}
}

// Event is an alarm raised or ended.
type Event struct {
	Signal string
	Change Change
	At     time.Time
	// Value, Baseline and Z are those of the sample that changed it.
	Value, Baseline, Z float64
	// Message words it for the event list.
	Message string
}

// Watch holds one detector per signal. It is not safe for concurrent use.
type Watch struct {
	signals   map[string]Signal
	detectors map[string]*Detector
}

// NewWatch returns a watch over the signals.
func NewWatch(signals ...Signal) *Watch {
	w := &Watch{signals: map[string]Signal{}, detectors: map[string]*Detector{}}
	for _, s := range signals {
		w.signals[s.Name] = s
		w.detectors[s.Name] = NewDetector(s.Config)
	}
	return w
}

// Observe judges one sample of the named signal; it returns an event when
// the sample raised or ended an alarm. Unknown names are ignored.
func (w *Watch) Observe(name string, t time.Time, x float64) (Event, bool) {
	d := w.detectors[name]
	if d == nil {
		return Event{}, false
	}
	v := d.Observe(t, x)
	if v.Change == Steady {
		return Event{}, false
	}
	s := w.signals[name]
	e := Event{Signal: name, Change: v.Change, At: t, Value: x, Baseline: v.Baseline, Z: v.Z}
	switch v.Change {
	case Raised:
		e.Message = fmt.Sprintf("%s is anomalous: %s against a baseline of %s (%.1f robust standard deviations)",
			name, s.format(x), s.format(v.Baseline), v.Z)
	case Cleared:
		e.Message = fmt.Sprintf("%s is back to normal: %s (baseline %s)", name, s.format(x), s.format(v.Baseline))
	case Relearned:
		e.Message = fmt.Sprintf("%s stayed at %s: taken as its new normal", name, s.format(x))
	}
	return e, true
}

// Alarming maps the signals in alarm to when their alarm was raised.
func (w *Watch) Alarming() map[string]time.Time {
	out := map[string]time.Time{}
	for name, d := range w.detectors {
		if d.alarm {
			out[name] = d.since
		}
	}
	return out
}

func (s Signal) format(x float64) string {
	if !s.Seconds {
		return fmt.Sprintf("%.3g", x)
	}
	return time.Duration(x * float64(time.Second)).Round(10 * time.Microsecond).String()
}
