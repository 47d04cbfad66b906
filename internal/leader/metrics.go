package leader

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/anomaly"
)

// metrics are the leader's (docs/metrics.md names every one).
type metrics struct {
	evalWait       prometheus.Histogram
	evalProcess    prometheus.Histogram
	evalPanics     prometheus.Counter
	planApply      prometheus.Histogram
	plans          *prometheus.CounterVec
	planRejections prometheus.Counter

	heartbeats       prometheus.Counter
	heartbeatsMissed prometheus.Counter

	autoQuarantines prometheus.Counter
	collected       *prometheus.CounterVec

	loopRunning *prometheus.GaugeVec
	loopSteps   *prometheus.CounterVec

	scheduler *schedulerMetrics // metrics_scheduler.go
	// anomalous is 1 per control-plane signal in alarm (anomalies.go).
	anomalous *prometheus.GaugeVec
}

// latencyBuckets run from 0.5 ms to about 33 s.
var latencyBuckets = prometheus.ExponentialBuckets(0.0005, 2, 17)

func newMetrics(l *Leader, reg prometheus.Registerer) *metrics {
	hist := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets})
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	m := &metrics{
		evalWait:    hist("strata_broker_eval_wait_seconds", "Time from an evaluation's creation to a scheduler worker taking it from the broker."),
		evalProcess: hist("strata_scheduler_eval_seconds", "Time a scheduler worker spent on one evaluation, plan submission included."),
		evalPanics: counter("strata_scheduler_panics_total",
			"Evaluations whose scheduling panicked: each is stored failed with the panic and its stack, and the leader goes on."),
		planApply: hist("strata_plan_apply_seconds", "Time the plan applier spent on one plan: re-checking its nodes and committing it."),
		plans: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_plans_total",
			Help: "Plans the plan applier handled, by outcome: committed (all of it), partial (some nodes rejected), rejected (nothing committed), error."},
			[]string{"outcome"}),
		planRejections: counter("strata_plan_node_rejections_total",
			"Nodes of plans the plan applier rejected because they no longer fit in the newest state (optimistic-concurrency conflicts)."),
		heartbeats:       counter("strata_heartbeats_total", "Heartbeats the leader received from nodes (registrations included)."),
		heartbeatsMissed: counter("strata_heartbeats_missed_total", "Nodes whose heartbeat TTL expired on the leader (each is then marked down)."),
		autoQuarantines: counter("strata_node_quarantines_auto_total",
			"Nodes the leader quarantined on its own: their allocations failed far more often than the cell's, or their heartbeats flapped (docs/nodes.md)."),
		collected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_gc_collected_total",
			Help: "Finished objects the leader's garbage collection proposed to delete, by kind: allocation, evaluation, deployment (docs/gc.md)."},
			[]string{"kind"}),
		loopRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "strata_leader_loop_running",
			Help: "Goroutines of each leader loop running now (its Count while this server leads, 0 elsewhere)."}, []string{"loop"}),
		loopSteps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_leader_loop_steps_total",
			Help: "Passes of each periodic leader loop, by outcome: ok, error, panic (logged, retried next pass)."}, []string{"loop", "outcome"}),
	}
	for _, kind := range []string{"allocation", "evaluation", "deployment"} {
		m.collected.WithLabelValues(kind) // exported at 0 before the first collection
	}
	for _, lp := range l.loops {
		m.loopRunning.WithLabelValues(lp.Name) // exported at 0 on followers
	}
	reg.MustRegister(m.evalWait, m.evalProcess, m.evalPanics, m.planApply, m.plans, m.planRejections,
		m.heartbeats, m.heartbeatsMissed, m.autoQuarantines, m.collected, m.loopRunning, m.loopSteps)
	m.scheduler = newSchedulerMetrics(reg)

	gauge := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	}
	gauge("strata_broker_ready", "Evaluations waiting in the broker for a scheduler worker (leader only).", func() float64 {
		r, _, _ := l.broker.Stats()
		return float64(r)
	})
	gauge("strata_broker_inflight", "Evaluations a scheduler worker is processing (leader only).", func() float64 {
		_, f, _ := l.broker.Stats()
		return float64(f)
	})
	gauge("strata_broker_blocked", "Evaluations waiting for capacity (leader only).", func() float64 {
		_, _, b := l.broker.Stats()
		return float64(b)
	})
	gauge("strata_plan_queue_depth", "Plans waiting for the plan applier (leader only).", func() float64 { return float64(len(l.plans.queue)) })
	gauge("strata_heartbeat_tracked_nodes", "Nodes whose heartbeats the leader tracks (alive, not down).", func() float64 { return float64(l.beats.Len()) })
	gauge("strata_heartbeat_interval_seconds", "Interval nodes are told to heartbeat at, at the cell's current size, before stagger.", func() float64 {
		interval, _ := l.beats.policy.Timing(l.beats.Len(), 0)
		return interval.Seconds()
	})
	guard := func(pick func(g guardState) float64) func() float64 {
		return func() float64 { return pick(l.beats.GuardState(l.cfg.Now())) }
	}
	gauge("strata_heartbeat_guard_starved", "1 while the leader judges itself starved of heartbeats (late on average, or too few) and defers node downs (leader only).",
		guard(func(g guardState) float64 { return map[bool]float64{true: 1}[g.starved] }))
	gauge("strata_heartbeat_handled_per_second", "Heartbeats the leader handled per second over the guard's window (leader only).",
		guard(func(g guardState) float64 { return g.handledPerSecond }))
	gauge("strata_heartbeat_expected_per_second", "Heartbeats per second the leader expects from the nodes it tracks, from the intervals it told them (leader only).",
		guard(func(g guardState) float64 { return g.expectedPerSecond }))
	gauge("strata_heartbeat_late_seconds", "Mean lateness of the heartbeats the leader handled over the guard's window, against when each was due (leader only).",
		guard(func(g guardState) float64 { return g.meanLate.Seconds() }))
	// A count that only grows (from 0 in each leadership term): a counter,
	// as its _total says (promtool check metrics).
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "strata_heartbeat_guard_kept_total",
		Help: "Times an overdue node was kept rather than marked down (a starved leader's deferral or the down rate limit)."},
		guard(func(g guardState) float64 { return float64(g.kept) })))
	gauge("strata_nodes_quarantined_auto", "Nodes quarantined automatically now (until an operator lifts them).",
		func() float64 { return float64(autoQuarantined(l.state().Snapshot())) })
	gauge("strata_quarantine_held_back", "Nodes whose evidence would quarantine them but whom the cap on automatic quarantine held back, at the leader's last check (leader only).",
		func() float64 { return float64(l.quarantines.heldBackNow()) })
	reg.MustRegister(nodeStatusCollector{l})
	// One series per control-plane signal (four): 1 while its detector is
	// in alarm (anomalies.go), for the StrataControlPlaneAnomaly alert.
	anomalous := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "strata_control_plane_anomaly",
		Help: "1 while a control-plane signal is out of its recent normal (leader only; docs/incidents.md), by signal."}, []string{"signal"})
	reg.MustRegister(anomalous)
	m.anomalous = anomalous
	for _, s := range anomaly.ControlPlane() {
		anomalous.WithLabelValues(anomalySlug(s.Name))
	}
	return m
}

// nodeStatusCollector reports the nodes of each status from the state.
type nodeStatusCollector struct{ l *Leader }

var nodesDesc = prometheus.NewDesc("strata_nodes", "Nodes in the state, by status (ready, down, draining, quarantined).", []string{"status"}, nil)

func (c nodeStatusCollector) Describe(ch chan<- *prometheus.Desc) { ch <- nodesDesc }

func (c nodeStatusCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[string]int{api.NodeReady: 0, api.NodeDown: 0, api.NodeDraining: 0, api.NodeQuarantined: 0}
	for _, n := range c.l.state().Snapshot().Nodes() {
		counts[n.Status]++
	}
	for status, n := range counts {
		ch <- prometheus.MustNewConstMetric(nodesDesc, prometheus.GaugeValue, float64(n), status)
	}
}

// observePlan records one plan the applier handled.
func (m *metrics) observePlan(plan *api.Plan, res *api.PlanResult, err error, took time.Duration) {
	m.planApply.Observe(took.Seconds())
	if err == nil {
		m.scheduler.observeCommitted(plan, res)
	}
	switch {
	case err != nil || res == nil:
		m.plans.WithLabelValues("error").Inc()
	case len(res.Rejected) == 0:
		m.plans.WithLabelValues("committed").Inc()
	case len(res.Committed) == 0:
		m.plans.WithLabelValues("rejected").Inc()
	default:
		m.plans.WithLabelValues("partial").Inc()
	}
	if res != nil {
		m.planRejections.Add(float64(len(res.Rejected)))
	}
}
