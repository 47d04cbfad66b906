package leader

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-dev/strata/api"
)

// schedulerMetrics count what placements did, for the scheduler's
// dashboard and the placement-failure alert (deploy/prometheus): copies
// committed, copies that fitted nowhere, and the nodes each filter
// rejected. The filter label is the filter's name (ready, resources, gpu,
// numa, spread rack, ...): a fixed set plus one per topology key, never a
// node or workload.
type schedulerMetrics struct {
	placed   prometheus.Counter
	unplaced prometheus.Counter
	rejected *prometheus.CounterVec
	// unplacedCount is unplaced as a number the anomalies loop reads.
	unplacedCount atomic.Uint64
}

func newSchedulerMetrics(reg prometheus.Registerer) *schedulerMetrics {
	m := &schedulerMetrics{
		placed: prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_scheduler_placements_total",
			Help: "Allocations placed: committed by the plan applier (leader only)."}),
		unplaced: prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_scheduler_unplaced_total",
			Help: "Copies an evaluation wanted but could place on no node (its final plan; leader only)."}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_scheduler_node_rejections_total",
			Help: "Nodes a filter rejected while the scheduler placed a group, by filter (final plans; leader only)."}, []string{"filter"}),
	}
	reg.MustRegister(m.placed, m.unplaced, m.rejected)
	return m
}

// observeCommitted counts the placements of the nodes the applier committed.
func (m *schedulerMetrics) observeCommitted(plan *api.Plan, res *api.PlanResult) {
	if plan == nil || res == nil {
		return
	}
	for _, id := range res.Committed {
		m.placed.Add(float64(len(plan.Place[id])))
	}
}

// observeFinal counts what an evaluation's final plan could not place and
// which filters rejected nodes on the way.
func (m *schedulerMetrics) observeFinal(plan *api.Plan) {
	for _, f := range plan.Failures {
		m.unplaced.Add(float64(f.Missing))
		m.unplacedCount.Add(uint64(max(0, f.Missing)))
	}
	for _, e := range plan.Explanations {
		for _, f := range e.Filtered {
			m.rejected.WithLabelValues(f.Filter).Add(float64(f.Nodes))
		}
	}
}
