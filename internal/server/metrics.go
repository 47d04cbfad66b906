package server

import (
	"net/http"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/strata-dev/strata/api"
)

// serverMetrics are the server's Prometheus metrics, served at GET
// /metrics (docs/metrics.md names every one). Each Server has its own
// registry, so tests may run several servers in one process.
type serverMetrics struct {
	reg *prometheus.Registry

	raftCommit    prometheus.Histogram
	leaderChanges prometheus.Counter

	evalWait       prometheus.Histogram
	evalProcess    prometheus.Histogram
	planApply      prometheus.Histogram
	plans          *prometheus.CounterVec
	planRejections prometheus.Counter

	heartbeats       prometheus.Counter
	heartbeatsMissed prometheus.Counter

	autoQuarantines prometheus.Counter
	collected       *prometheus.CounterVec

	httpRequests *prometheus.HistogramVec

	scheduler *schedulerMetrics // metrics_scheduler.go
}

// latencyBuckets run from 0.5 ms to about 33 s.
var latencyBuckets = prometheus.ExponentialBuckets(0.0005, 2, 17)

func newServerMetrics() *serverMetrics {
	m := &serverMetrics{reg: prometheus.NewRegistry()}
	hist := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets})
	}
	m.raftCommit = hist("strata_raft_commit_seconds", "Time from handing a write to raft to the FSM having applied it, on the leader.")
	m.leaderChanges = prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_raft_leader_changes_total",
		Help: "Changes of the raft leader this server observed (an election it won, lost or heard of)."})
	m.evalWait = hist("strata_broker_eval_wait_seconds", "Time from an evaluation's creation to a scheduler worker taking it from the broker.")
	m.evalProcess = hist("strata_scheduler_eval_seconds", "Time a scheduler worker spent on one evaluation, plan submission included.")
	m.planApply = hist("strata_plan_apply_seconds", "Time the plan applier spent on one plan: re-checking its nodes and committing it.")
	m.plans = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_plans_total",
		Help: "Plans the plan applier handled, by outcome: committed (all of it), partial (some nodes rejected), rejected (nothing committed), error."},
		[]string{"outcome"})
	m.planRejections = prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_plan_node_rejections_total",
		Help: "Nodes of plans the plan applier rejected because they no longer fit in the newest state (optimistic-concurrency conflicts)."})
	m.heartbeats = prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_heartbeats_total",
		Help: "Heartbeats the leader received from nodes (registrations included)."})
	m.heartbeatsMissed = prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_heartbeats_missed_total",
		Help: "Nodes whose heartbeat TTL expired on the leader (each is then marked down)."})
	m.autoQuarantines = prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_node_quarantines_auto_total",
		Help: "Nodes the leader quarantined on its own: their allocations failed far more often than the cell's, or their heartbeats flapped (docs/nodes.md)."})
	m.collected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_gc_collected_total",
		Help: "Finished objects the leader's garbage collection proposed to delete, by kind: allocation, evaluation, deployment (docs/gc.md)."},
		[]string{"kind"})
	for _, kind := range []string{"allocation", "evaluation", "deployment"} {
		m.collected.WithLabelValues(kind) // exported at 0 before the first collection
	}
	m.httpRequests = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strata_http_request_seconds",
		Help: "HTTP API requests by route pattern (method and path template) and status code.", Buckets: latencyBuckets},
		[]string{"route", "code"})
	m.reg.MustRegister(m.raftCommit, m.leaderChanges, m.evalWait, m.evalProcess, m.planApply, m.plans, m.planRejections,
		m.heartbeats, m.heartbeatsMissed, m.autoQuarantines, m.collected, m.httpRequests,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.scheduler = newSchedulerMetrics(m.reg)
	return m
}

// registerStateGauges adds the gauges read from the server at scrape time.
func (s *Server) registerStateGauges() {
	gauge := func(name, help string, f func() float64) {
		s.metrics.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	}
	gauge("strata_raft_applied_index", "Last raft index applied to this server's FSM.", func() float64 { return float64(s.raft.raft.AppliedIndex()) })
	gauge("strata_raft_last_index", "Last raft index in this server's log.", func() float64 { return float64(s.raft.raft.LastIndex()) })
	gauge("strata_raft_is_leader", "1 on the leader, 0 elsewhere.", func() float64 {
		if s.IsLeader() {
			return 1
		}
		return 0
	})
	gauge("strata_broker_ready", "Evaluations waiting in the broker for a scheduler worker (leader only).", func() float64 {
		r, _, _ := s.broker.Stats()
		return float64(r)
	})
	gauge("strata_broker_inflight", "Evaluations a scheduler worker is processing (leader only).", func() float64 {
		_, f, _ := s.broker.Stats()
		return float64(f)
	})
	gauge("strata_broker_blocked", "Evaluations waiting for capacity (leader only).", func() float64 {
		_, _, b := s.broker.Stats()
		return float64(b)
	})
	gauge("strata_plan_queue_depth", "Plans waiting for the plan applier (leader only).", func() float64 { return float64(len(s.plans.queue)) })
	gauge("strata_heartbeat_tracked_nodes", "Nodes whose heartbeats the leader tracks (alive, not down).", func() float64 { return float64(s.beats.Len()) })
	gauge("strata_heartbeat_interval_seconds", "Interval nodes are told to heartbeat at, at the cell's current size, before stagger.", func() float64 {
		interval, _ := s.beats.policy.Timing(s.beats.Len(), 0)
		return interval.Seconds()
	})
	guard := func(pick func(g guardState) float64) func() float64 {
		return func() float64 { return pick(s.beats.GuardState(s.cfg.Now())) }
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
	s.metrics.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "strata_heartbeat_guard_kept_total",
		Help: "Times an overdue node was kept rather than marked down (a starved leader's deferral or the down rate limit)."},
		guard(func(g guardState) float64 { return float64(g.kept) })))
	gauge("strata_nodes_quarantined_auto", "Nodes quarantined automatically now (until an operator lifts them).",
		func() float64 { return float64(autoQuarantined(s.State().Snapshot())) })
	gauge("strata_quarantine_held_back", "Nodes whose evidence would quarantine them but whom the cap on automatic quarantine held back, at the leader's last check (leader only).",
		func() float64 { return float64(s.quarantines.heldBackNow()) })
	s.metrics.reg.MustRegister(nodeStatusCollector{s})
}

// nodeStatusCollector reports the nodes of each status from the state.
type nodeStatusCollector struct{ s *Server }

var nodesDesc = prometheus.NewDesc("strata_nodes", "Nodes in the state, by status (ready, down, draining, quarantined).", []string{"status"}, nil)

func (c nodeStatusCollector) Describe(ch chan<- *prometheus.Desc) { ch <- nodesDesc }

func (c nodeStatusCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[string]int{api.NodeReady: 0, api.NodeDown: 0, api.NodeDraining: 0, api.NodeQuarantined: 0}
	for _, n := range c.s.State().Snapshot().Nodes() {
		counts[n.Status]++
	}
	for status, n := range counts {
		ch <- prometheus.MustNewConstMetric(nodesDesc, prometheus.GaugeValue, float64(n), status)
	}
}

// observeLeaderChanges counts leader changes raft reports until the server
// closes.
func (s *Server) observeLeaderChanges() {
	ch := make(chan raft.Observation, 16)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	s.raft.raft.RegisterObserver(obs)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.raft.raft.DeregisterObserver(obs)
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-ch:
				s.metrics.leaderChanges.Inc()
			}
		}
	}()
}

// instrument times every request by the route pattern the mux matched
// (never the raw path, whose ids would make a series per object).
func (m *serverMetrics) instrument(mux *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		// The route is looked up here, not read from r.Pattern after the
		// fact: next (the ACL layer) serves a copy of r.
		_, route := mux.Handler(r)
		next.ServeHTTP(sw, r)
		if route == "" || route == "/" {
			route = "unmatched"
		}
		m.httpRequests.WithLabelValues(route, statusClass(sw.code)).Observe(time.Since(start).Seconds())
	})
}

// withMetricsEndpoint serves GET /metrics ahead of the readiness gate: a
// server that is not ready yet is what an operator wants to watch.
func (s *Server) withMetricsEndpoint(next http.Handler) http.Handler {
	metrics := promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			// With ACLs on, a scrape needs a token that may read the cell.
			s.authorizeAndServe(w, r, metrics, metricsRoute, &caller{})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// metricsRoute is /metrics's pattern in routeRules.
const metricsRoute = "GET /metrics"

// statusClass keeps the code label to a handful of values per route.
func statusClass(code int) string {
	switch {
	case code < 300:
		return "2xx"
	case code < 400:
		return "3xx"
	case code < 500:
		return "4xx"
	}
	return "5xx"
}

// statusWriter records the status code; Unwrap keeps
// http.ResponseController (flushes, deadlines) working through it.
type statusWriter struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.code, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush lets handlers that assert http.Flusher directly stream too.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// observePlan records one plan the applier handled.
func (m *serverMetrics) observePlan(plan *api.Plan, res *api.PlanResult, err error, took time.Duration) {
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
