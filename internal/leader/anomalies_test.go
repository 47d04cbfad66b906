package leader

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestAnomaliesSeeTheBacklogGrow: a leader whose evaluation backlog crept
// up slowly for its baseline and then jumps raises one anomaly event;
// signals with no data (no commit, no node) are not judged.
func TestAnomaliesSeeTheBacklogGrow(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	r := newRig(t, Config{Now: func() time.Time { return now }})
	r.l.broker.SetEnabled(true)
	r.l.anomalies.begin()
	enqueue := func(n int) {
		for i := range n {
			id := fmt.Sprintf("%d-%d", now.Unix(), i)
			r.l.broker.Enqueue(&api.Evaluation{ID: "e-" + id, Workload: "w-" + id, Status: api.EvalPending})
		}
	}
	var events []api.Event
	for i := range 60 {
		enqueue(i % 3) // a backlog that creeps up slowly: 0, 1, 3, 3, 4, 6, ...
		events = append(events, r.l.anomalies.sample()...)
		now = now.Add(10 * time.Second)
	}
	if len(events) != 0 {
		t.Fatalf("events on the normal: %+v", events)
	}
	enqueue(300)
	for range 5 {
		events = append(events, r.l.anomalies.sample()...)
		now = now.Add(10 * time.Second)
	}
	if len(events) != 1 || events[0].Type != api.EventAnomaly || !strings.HasPrefix(events[0].Message, "evaluation backlog is anomalous: 3") {
		t.Fatalf("events %+v, want one anomaly of the backlog", events)
	}
	if _, ok := r.l.anomalies.watch.Alarming()["raft commit latency"]; ok {
		t.Fatal("commit latency judged without a commit")
	}
}

// TestHeartbeatLateness: the 90th percentile of how late the tracked
// nodes are, not the one dead node.
func TestHeartbeatLateness(t *testing.T) {
	h := newHeartbeats(HeartbeatPolicy{MinTTL: time.Minute, MinInterval: time.Second}, func() float64 { return 0 })
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	if _, ok := h.lateness(now); ok {
		t.Fatal("lateness without a node")
	}
	var interval time.Duration
	for i := range 20 {
		interval, _ = h.Reset(fmt.Sprint("n", i), now)
	}
	h.Reset("dead", now.Add(-30*time.Second))
	late, ok := h.lateness(now.Add(interval + 2*time.Second))
	if !ok || late != 2*time.Second {
		t.Fatalf("lateness %s (%v), want 2s: the dead node is one of 21", late, ok)
	}
}
