package leader

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/gc"
	"github.com/strata-dev/strata/internal/incident"
	"github.com/strata-dev/strata/internal/quarantine"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/state"
	"github.com/strata-dev/strata/internal/trigger"
)

// Config configures the leader's loops; zero durations take the defaults.
type Config struct {
	// Workers is the number of parallel scheduler workers. Default
	// GOMAXPROCS.
	Workers int
	// Heartbeats says how often nodes heartbeat and how long the leader
	// waits for them.
	Heartbeats HeartbeatPolicy
	// DrainInterval is how often drains are checked (default 1s).
	DrainInterval time.Duration
	// AutoQuarantine is when the leader quarantines a node on its own;
	// QuarantineInterval how often it judges (default 30s).
	AutoQuarantine     quarantine.Policy
	QuarantineInterval time.Duration
	// GC is how long finished objects are kept; GCInterval how often they
	// are collected (default 5m).
	GC         gc.Policy
	GCInterval time.Duration
	// JoinToken, when set, is the join token the leader keeps the cell's
	// at; empty: the cell keeps the one it has, or gets a new one.
	JoinToken string
	// Incidents tunes the incident engine (docs/incidents.md);
	// IncidentInterval is how often the incidents loop passes (default
	// 5s).
	Incidents        incident.Policy
	IncidentInterval time.Duration
	// RolloutGuard configures the rollout guard of deployments.
	RolloutGuard GuardConfig
	// AnomalyInterval is how often the control plane's signals are
	// sampled (default 10s: the detectors' windows count samples).
	AnomalyInterval time.Duration
	// Loops of other rooms that run with leadership (the API's audit log
	// flush): they join the table (loops.go).
	Loops []Loop
	// Now is the clock; default time.Now.
	Now     func() time.Time
	Metrics prometheus.Registerer
	Logger  *slog.Logger

	// schedule, when set, replaces the scheduler (tests).
	schedule func(scheduler.State, *api.Evaluation, scheduler.Options) *api.Plan
}

// Leader runs the cell's leader loops while this server leads: it is the
// replica's Leadership (Lead, Follow) and follows what the FSM applies
// (Applied). Its methods for the API (Heartbeat, Forget, DrainWants,
// Serialize, DryRun, PlanMigration) are safe from any goroutine.
type Leader struct {
	cfg      Config
	logger   *slog.Logger
	fsm      *fsm.FSM
	proposer *fsm.Proposer
	make     *trigger.Maker
	metrics  *metrics

	broker      *evalBroker
	plans       *planApplier
	beats       *heartbeats
	drainer     *drainer
	quarantines *autoQuarantine
	reverts     *reverts
	retries     *retries
	correlation *correlation
	anomalies   *anomalies
	// nodeTables keeps the scheduler's node tables per topology version
	// of the store, shared by the workers and dry runs.
	nodeTables scheduler.IndexCache

	// wasStarved is what the last heartbeat check judged (heartbeat_check.go).
	wasStarved atomic.Bool

	loops []Loop
	wg    sync.WaitGroup // the loops of every term
}

// New makes the leader of the cell whose state f holds; it proposes with
// p and makes evaluations with maker. Nothing runs until Lead. cfg's
// policies are the caller's to validate; New refuses a loop table that
// cannot run (checkLoops).
func New(cfg Config, f *fsm.FSM, p *fsm.Proposer, maker *trigger.Maker) (*Leader, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.DrainInterval <= 0 {
		cfg.DrainInterval = time.Second
	}
	if cfg.QuarantineInterval <= 0 {
		cfg.QuarantineInterval = 30 * time.Second
	}
	if cfg.GCInterval <= 0 {
		cfg.GCInterval = 5 * time.Minute
	}
	if cfg.IncidentInterval <= 0 {
		cfg.IncidentInterval = 5 * time.Second
	}
	if cfg.AnomalyInterval <= 0 {
		cfg.AnomalyInterval = 10 * time.Second
	}
	if cfg.RolloutGuard.Classes == nil {
		cfg.RolloutGuard.Classes = DefaultGuardClasses()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	if cfg.schedule == nil {
		cfg.schedule = scheduler.Schedule
	}
	l := &Leader{cfg: cfg, logger: cfg.Logger, fsm: f, proposer: p, make: maker, broker: newEvalBroker()}
	l.broker.now = cfg.Now // follow-ups fall due by the scheduler's clock
	l.beats = newHeartbeats(cfg.Heartbeats, nil)
	l.plans = newPlanApplier(l)
	l.drainer = newDrainer(l)
	l.quarantines = &autoQuarantine{l: l}
	l.reverts = newReverts(l)
	l.retries = newRetries()
	l.correlation = newCorrelation(l)
	l.anomalies = newAnomalies(l)
	l.loops = append(l.table(), cfg.Loops...)
	if err := checkLoops(l.loops); err != nil {
		return nil, fmt.Errorf("leader loops: %w", err)
	}
	l.metrics = newMetrics(l, cfg.Metrics)
	return l, nil
}

// state is the FSM's store.
func (l *Leader) state() *state.Store { return l.fsm.State() }

// propose commits one command and returns its index; how long it took
// is a sample of the commit latency the anomalies loop watches.
func (l *Leader) propose(body any) (uint64, error) {
	start := time.Now()
	idx, _, err := l.proposer.Propose(body)
	if err == nil {
		l.anomalies.observeCommit(time.Since(start))
	}
	return idx, err
}

// Lead begins a term (replica.Leadership): the cell gets its identity if
// it has none, the broker is filled from the state (no pending or blocked
// evaluation is forgotten), every known node gets a fresh grace period,
// and the loops start. An error (the identity could not be written)
// leaves nothing started.
func (l *Leader) Lead(ctx context.Context) error {
	// A new cell gets its identity before its leader answers anyone.
	if err := l.ensureCellID(); err != nil {
		return err
	}
	l.broker.SetEnabled(true)
	snap := l.state().Snapshot()
	for _, e := range snap.Evals(nil) {
		switch e.Status {
		case api.EvalPending:
			l.broker.Enqueue(e)
		case api.EvalBlocked:
			l.broker.Enqueue(e) // capacity may have changed while no leader watched
		}
	}
	now := l.cfg.Now()
	for _, n := range snap.Nodes() {
		if n.Status != api.NodeDown {
			l.beats.Reset(n.ID, now) // a fresh grace period after a failover or restart
		}
	}
	l.start(ctx)
	l.ensureJoinToken()
	l.logger.Info("leader loops started", "workers", l.cfg.Workers, "loops", len(l.loops))
	return nil
}

// Follow ends a term (replica.Leadership): the loops' context is
// cancelled already; the broker drops its queues (the next leader
// restores them from the state) and node deadlines are forgotten.
func (l *Leader) Follow() {
	l.broker.SetEnabled(false)
	l.beats.Clear()
}

// Wait returns once the loops of every term have returned.
func (l *Leader) Wait() { l.wg.Wait() }

// Applied acts on what an applied entry asks (fsm.Effects), on every
// server; only a leader's broker takes the evaluations. It does not block.
func (l *Leader) Applied(_ uint64, e fsm.Effects) {
	for _, ev := range e.Evals {
		if ev.Status == api.EvalPending {
			l.broker.Enqueue(ev)
		}
	}
	if e.DeploymentFailed {
		l.reverts.kick()
	}
	if e.Unblock {
		l.broker.Unblock()
	}
}
