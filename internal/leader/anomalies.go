package leader

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/anomaly"
	"github.com/strata-dev/strata/internal/fsm"
)

// anomalies is the leader's anomalies loop (docs/incidents.md): every
// AnomalyInterval it samples the control plane's own signals — how long
// its proposals took to commit, the evaluations waiting, how late the
// nodes' heartbeats are, the copies that fit nowhere — into a detector
// each (internal/anomaly), and records each alarm raised or cleared as an
// event. A signal with no data in an interval (no proposal, no node) is
// not sampled: nothing is judged on missing data (invariant 10).
type anomalies struct {
	l *Leader

	mu    sync.Mutex
	watch *anomaly.Watch
	// unplaced is the count of copies that fit nowhere at the last sample.
	unplaced uint64
	// commits sums the commit times since the last sample.
	commitSum   time.Duration
	commitCount int
}

func newAnomalies(l *Leader) *anomalies {
	return &anomalies{l: l, watch: anomaly.NewWatch(anomaly.ControlPlane()...)}
}

// begin starts each term with fresh baselines: the last leader's are not
// this server's.
func (a *anomalies) begin() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.l.metrics.anomalous.Reset() // a new term's detectors start out of alarm
	for _, s := range anomaly.ControlPlane() {
		a.l.metrics.anomalous.WithLabelValues(anomalySlug(s.Name))
	}
	a.watch = anomaly.NewWatch(anomaly.ControlPlane()...)
	a.unplaced = a.l.metrics.scheduler.unplacedCount.Load()
	a.commitSum, a.commitCount = 0, 0
}

// observeCommit records how long one of the leader's proposals (or a
// plan's commit) took.
func (a *anomalies) observeCommit(d time.Duration) {
	a.mu.Lock()
	a.commitSum += d
	a.commitCount++
	a.mu.Unlock()
}

func (a *anomalies) step(context.Context) error {
	if events := a.sample(); len(events) > 0 {
		_, err := a.l.propose(&fsm.RecordEvents{Events: events})
		return err
	}
	return nil
}

// sample takes one sample of every signal and returns the events of the
// alarms it raised or cleared.
func (a *anomalies) sample() []api.Event {
	l := a.l
	now := l.cfg.Now()
	ready, _, _ := l.broker.Stats()
	lateness, tracked := l.beats.lateness(now)
	a.mu.Lock()
	defer a.mu.Unlock()
	unplaced := l.metrics.scheduler.unplacedCount.Load()
	samples := []struct {
		signal anomaly.Signal
		value  float64
		ok     bool
	}{
		{anomaly.RaftCommitLatency, a.commitSum.Seconds() / float64(max(1, a.commitCount)), a.commitCount > 0},
		{anomaly.EvaluationBacklog, float64(ready), true},
		{anomaly.HeartbeatLateness, lateness.Seconds(), tracked},
		{anomaly.PlacementFailures, float64(unplaced - a.unplaced), true},
	}
	a.unplaced, a.commitSum, a.commitCount = unplaced, 0, 0
	var out []api.Event
	for _, s := range samples {
		if !s.ok {
			continue
		}
		if e, ok := a.watch.Observe(s.signal.Name, now, s.value); ok {
			out = append(out, api.Event{Time: now, Type: api.EventAnomaly, Message: e.Message})
			l.metrics.anomalous.WithLabelValues(anomalySlug(s.signal.Name)).Set(map[bool]float64{true: 1}[e.Change == anomaly.Raised])
		}
	}
	return out
}

// anomalySlug is a signal's name as a metric's label ("raft_commit_latency").
func anomalySlug(name string) string { return strings.ReplaceAll(name, " ", "_") }

// lateness is the 90th percentile, over the nodes tracked, of how late
// their heartbeats are at now (the time since a node's last renewal past
// the interval it was told; 0 for one on time), and whether any node is
// tracked. The percentile, not the maximum: one dead node is a node's
// trouble, late heartbeats across the cell the control plane's.
func (h *heartbeats) lateness(now time.Time) (time.Duration, bool) {
	h.mu.Lock()
	late := make([]time.Duration, 0, len(h.renewed))
	for node, r := range h.renewed {
		if _, tracked := h.deadlines[node]; !tracked || r.at.IsZero() {
			continue
		}
		late = append(late, max(0, now.Sub(r.at)-r.interval))
	}
	h.mu.Unlock()
	if len(late) == 0 {
		return 0, false
	}
	slices.Sort(late)
	return late[min(len(late)-1, len(late)*9/10)], true
}
