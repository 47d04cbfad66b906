package replica

import (
	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the replica's (docs/metrics.md names every one).
type metrics struct {
	commit        prometheus.Histogram
	leaderChanges prometheus.Counter
}

// latencyBuckets run from 0.5 ms to about 33 s.
var latencyBuckets = prometheus.ExponentialBuckets(0.0005, 2, 17)

func newMetrics(r *Replica, reg prometheus.Registerer) *metrics {
	m := &metrics{
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "strata_raft_commit_seconds",
			Help: "Time from handing a write to raft to the FSM having applied it, on the leader.", Buckets: latencyBuckets}),
		leaderChanges: prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_raft_leader_changes_total",
			Help: "Changes of the raft leader this server observed (an election it won, lost or heard of)."}),
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	reg.MustRegister(m.commit, m.leaderChanges,
		gauge("strata_raft_applied_index", "Last raft index applied to this server's FSM.", func() float64 { return float64(r.raft.raft.AppliedIndex()) }),
		gauge("strata_raft_last_index", "Last raft index in this server's log.", func() float64 { return float64(r.raft.raft.LastIndex()) }),
		gauge("strata_raft_is_leader", "1 on the leader, 0 elsewhere.", func() float64 {
			if r.IsLeader() {
				return 1
			}
			return 0
		}))
	return m
}

// observeLeaderChanges counts leader changes raft reports until the
// replica closes.
func (r *Replica) observeLeaderChanges() {
	ch := make(chan raft.Observation, 16)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	r.raft.raft.RegisterObserver(obs)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer r.raft.raft.DeregisterObserver(obs)
		for {
			select {
			case <-r.ctx.Done():
				return
			case <-ch:
				r.metrics.leaderChanges.Inc()
			}
		}
	}()
}
