package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/gc"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/keyring"
	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/quarantine"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/state"
	"github.com/strata-dev/strata/internal/ui"
)

// Config configures a server.
type Config struct {
	DataDir  string
	HTTPAddr string // e.g. 127.0.0.1:4680; ":0" picks a free port
	// RaftAddr is the server port, where the servers of a cell reach each
	// other (raft and their own HTTP, see internal/serverport). Empty runs a
	// lone server over an in-memory transport (it can never grow a cell).
	RaftAddr string
	// RaftAdvertise is the address other servers dial, default RaftAddr
	// (which must then name a concrete IP).
	RaftAdvertise string
	// BootstrapExpect is how many servers form a new cell. A server with no
	// state waits until it has heard from that many servers with no state
	// (through Join, transitively), then they bootstrap together. 0 or 1
	// without Join: a new cell of this server alone. 0 with Join: join the
	// existing cell Join reaches.
	BootstrapExpect int
	// Join lists other servers' RaftAddr (host:port). A server that is not a
	// voter at its address in a cell asks that cell's leader to add it.
	Join []string
	// RaftMultiplier scales raft's timeouts (default 1: followers start an
	// election after 0.5-1s without a leader); raise it on slow or loaded
	// machines, as Nomad's raft_multiplier.
	RaftMultiplier int
	// NoQuorumAfter is how long a server must have known no leader before
	// it answers no-quorum instead of not-leader (default 15s times
	// RaftMultiplier).
	NoQuorumAfter time.Duration
	// HeartbeatTTL is how long a node may stay silent before it is marked
	// down and its allocations replaced, while the cell is small. Default
	// 10s. A large cell's TTL grows with its heartbeat interval
	// (HeartbeatPolicy).
	HeartbeatTTL time.Duration
	// HeartbeatInterval is how often nodes of a small cell heartbeat;
	// default 1s.
	HeartbeatInterval time.Duration
	// MaxHeartbeatsPerSecond bounds the heartbeats of the whole cell: the
	// interval nodes are told grows with their number. Default 500;
	// negative: no bound.
	MaxHeartbeatsPerSecond float64
	// Workers is the number of parallel scheduler workers. Default GOMAXPROCS.
	Workers int
	Logger  *slog.Logger
	// Now is the clock; default time.Now. Only the leader's proposal path
	// reads it, never the FSM.
	Now func() time.Time
	// HTTP sets the API's timeouts and connection caps (docs/limits.md);
	// zero fields take the defaults.
	HTTP httplimit.Config
	// JoinToken, when set, is the cell's join token: agents register new
	// nodes with it. The leader sets it in the cell's state when it differs
	// (give every server the same one). Empty: the cell keeps the one it
	// has, or its first leader makes one. Either way every server writes
	// the cell's token to <DataDir>/join-token.
	JoinToken string
	// ACL turns ACLs on: every API request but the status endpoints and
	// the agents' own (which prove their node) needs a token whose
	// policies grant what it does (docs/security.md). Give every server of
	// a cell the same setting.
	ACL bool
	// TLS, when set, is the server's certificate, key and the cell's CA:
	// the API serves HTTPS, the server port is mutual TLS between servers,
	// and logs are fetched from agents over mutual TLS (tls.go). Nil:
	// plaintext, logged loudly.
	TLS *pki.Files

	// KeyringFile holds the keys that seal workload secrets, default
	// <DataDir>/keyring.json (created on first start). Every server of a
	// cell must use the same keyring: copy it before a server joins
	// (docs/security.md).
	KeyringFile string

	// DrainInterval is how often the leader checks drains for progress,
	// deadlines and completion. Default 1s.
	DrainInterval time.Duration

	// AutoQuarantine is when the leader quarantines a node on its own
	// (internal/quarantine; docs/nodes.md); the zero value is the
	// defaults, Off turns it off.
	AutoQuarantine quarantine.Policy
	// QuarantineInterval is how often the leader judges the nodes for
	// automatic quarantine. Default 30s.
	QuarantineInterval time.Duration

	// GC is how long finished allocations, evaluations and deployments
	// are kept (internal/gc; docs/gc.md); the zero value is the defaults,
	// Off turns collection off.
	GC gc.Policy
	// GCInterval is how often the leader collects garbage. Default 5m.
	GCInterval time.Duration

	// fsmApplyHook, when set, runs before the FSM applies each command
	// (tests use it to hold the replay at a chosen index).
	fsmApplyHook func(index uint64)
}

// Server is one control-plane server.
type Server struct {
	cfg     Config
	logger  *slog.Logger
	id      string
	keyring *keyring.Keyring

	fsm    *fsm
	raft   *raftNode
	broker *evalBroker
	plans  *planApplier
	// revertKick wakes the leader's auto-revert loop (deployments.go).
	revertKick chan struct{}
	beats      *heartbeats
	// drainer follows drains on the leader (drainer.go).
	drainer *drainer
	// quarantines quarantines failing and flapping nodes on the leader
	// (autoquarantine.go).
	quarantines *autoQuarantine
	// nodeTables keeps the scheduler's node tables per topology version
	// of the store, shared by the workers.
	nodeTables scheduler.IndexCache
	// metrics are served at /metrics (metrics.go, docs/metrics.md).
	metrics *serverMetrics
	audit   *auditor
	// joinFileMu serialises writes of <data-dir>/join-token.
	joinFileMu sync.Mutex
	// started is when this server started: a server that has known no
	// leader since, for long, says the cell has no quorum (noQuorum).
	started time.Time
	// defaultNameMu serialises the registrations of new nodes named by
	// default, so two agents of one host started together do not both
	// take its name (defaultNameTaken).
	defaultNameMu sync.Mutex

	httpSrv   *http.Server
	listener  net.Listener
	tls       *serverTLS   // nil: plaintext
	agentHTTP *http.Client // fetches logs from agents

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	ready *readiness
	// term holds the context of the current leadership term (nil when not
	// leading); reads served as leader end with it.
	term atomic.Pointer[context.Context]

	// The server port's HTTP (servers only): formation and forwarding.
	peerSrv  *http.Server
	peerHTTP *http.Client
	peers    peerBook

	leaderMu     sync.Mutex
	leaderCancel context.CancelFunc

	closeOnce sync.Once
	closeErr  error
}

// New opens the server's data dir and raft log and starts serving HTTP.
// It returns at once; the server answers requests (other than
// /v1/status/*) only once Ready is closed: its state is replayed.
func New(cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("server: data dir is required")
	}
	if cfg.HeartbeatTTL <= 0 {
		cfg.HeartbeatTTL = 10 * time.Second
	}
	if cfg.DrainInterval <= 0 {
		cfg.DrainInterval = time.Second
	}
	if cfg.GCInterval <= 0 {
		cfg.GCInterval = 5 * time.Minute
	}
	if err := cfg.GC.Validate(); err != nil {
		return nil, fmt.Errorf("server: gc: %w", err)
	}
	if w := cfg.AutoQuarantine.WithDefaults().Window; !cfg.GC.Off && !cfg.AutoQuarantine.Off && cfg.GC.WithDefaults().Allocations < w {
		return nil, fmt.Errorf("server: gc: allocations: retention %s is shorter than the automatic quarantine's window %s, whose evidence it would delete", cfg.GC.WithDefaults().Allocations, w)
	}
	if cfg.QuarantineInterval <= 0 {
		cfg.QuarantineInterval = 30 * time.Second
	}
	if err := cfg.AutoQuarantine.Validate(); err != nil {
		return nil, fmt.Errorf("server: automatic quarantine: %w", err)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	id, err := loadOrCreateID(filepath.Join(cfg.DataDir, "server-id"))
	if err != nil {
		return nil, err
	}
	if cfg.KeyringFile == "" {
		cfg.KeyringFile = filepath.Join(cfg.DataDir, keyring.FileName)
	}
	keys, err := keyring.LoadOrCreate(cfg.KeyringFile)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, logger: cfg.Logger.With("component", "server"), id: id, broker: newEvalBroker(), keyring: keys, metrics: newServerMetrics(),
		started: time.Now()}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.fsm = newFSM(s.logger)
	s.broker.now = cfg.Now // follow-ups fall due by the scheduler's clock
	s.fsm.onApply = s.afterApply
	s.fsm.beforeApply = cfg.fsmApplyHook
	s.beats = newHeartbeats(HeartbeatPolicy{MinTTL: cfg.HeartbeatTTL, MinInterval: cfg.HeartbeatInterval,
		MaxPerSecond: cfg.MaxHeartbeatsPerSecond}, nil)
	s.audit = newAuditor()
	s.drainer = newDrainer(s)
	s.quarantines = &autoQuarantine{srv: s}
	s.plans = newPlanApplier(s)
	s.revertKick = make(chan struct{}, 1)

	if cfg.BootstrapExpect < 0 {
		return nil, errors.New("server: bootstrap-expect must not be negative")
	}
	if cfg.TLS != nil {
		if s.tls, err = newServerTLS(cfg.TLS); err != nil {
			return nil, err
		}
	} else {
		s.logger.Warn("PLAINTEXT: this server's API and server port are not encrypted and do not authenticate their peers; use TLS (--tls-ca, --tls-cert, --tls-key) outside a test")
	}
	s.agentHTTP = newAgentHTTP(s.tls)
	if cfg.RaftAddr == "" && (cfg.BootstrapExpect > 1 || len(cfg.Join) > 0) {
		return nil, errors.New("server: a cell of several servers needs a raft address (--raft-addr) for the servers to reach each other")
	}
	s.raft, err = openRaft(raftOptions{dataDir: cfg.DataDir, serverID: id, bindAddr: cfg.RaftAddr, advertise: cfg.RaftAdvertise,
		multiplier: cfg.RaftMultiplier, bootstrapAlone: cfg.BootstrapExpect <= 1 && len(cfg.Join) == 0, logger: s.logger,
		tls: s.tls}, s.fsm)
	if err != nil {
		return nil, err
	}
	s.ready = newReadiness(s.raft.raft, s.raft.logStore, s.fsm, s.raft.observer)
	s.registerStateGauges()
	s.observeLeaderChanges()

	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		s.raft.Close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	s.listener = ln
	// The API listens at once, but answers nothing from the state until the
	// FSM has applied everything committed (readiness): /v1/status/* says
	// how far it is.
	// The web UI (internal/ui) is served beside the API at /ui/.
	s.httpSrv = httplimit.NewServer(ui.Mount(s.routes()), cfg.HTTP)
	if port := s.raft.port; port != nil {
		s.peerHTTP = newPeerHTTP(port)
		// The server port has the API's timeouts but no per-client caps: a
		// follower forwards all its clients' requests over its connections.
		s.peerSrv = httplimit.NewServer(s.peerRoutes(), cfg.HTTP)
		s.wg.Add(2)
		go func() {
			defer s.wg.Done()
			if err := s.peerSrv.Serve(port.HTTP()); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.logger.Error("server port http", "err", err)
			}
		}()
		go func() {
			defer s.wg.Done()
			s.formCell(s.ctx)
		}()
	}
	s.wg.Add(3)
	go func() {
		defer s.wg.Done()
		var l net.Listener = httplimit.Listen(ln, cfg.HTTP, s.logger)
		if s.tls != nil {
			l = tls.NewListener(l, s.tls.api)
		}
		if err := s.httpSrv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("http server", "err", err)
		}
	}()
	go func() {
		defer s.wg.Done()
		s.monitorLeadership()
	}()
	go func() {
		defer s.wg.Done()
		s.watchReadiness()
	}()
	s.logger.Info("server started", "id", id, "http", s.Addr(), "raft", s.raft.addr(), "data_dir", cfg.DataDir)
	return s, nil
}

// watchReadiness logs when the server first becomes ready; a follower's
// readiness is computed on demand, so it is polled here until then.
func (s *Server) watchReadiness() {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.ready.local() == nil {
			s.logger.Info("state replayed; serving", "index", s.fsm.AppliedIndex(), "leader", s.IsLeader())
			if token := s.JoinToken(); token != "" {
				s.writeJoinTokenFile(token) // a snapshot restore does not pass through afterApply
			}
			return
		}
		select {
		case <-s.ctx.Done():
			return
		case <-s.ready.ready:
		case <-tick.C:
		}
	}
}

// Ready is closed once the server has first been ready to serve: its FSM
// applied everything committed (see readiness).
func (s *Server) Ready() <-chan struct{} { return s.ready.ready }

// Addr returns the HTTP base URL, e.g. http://127.0.0.1:4680.
func (s *Server) Addr() string {
	if s.tls != nil {
		return "https://" + s.listener.Addr().String()
	}
	return "http://" + s.listener.Addr().String()
}

// State returns the current state store.
func (s *Server) State() *state.Store { return s.fsm.State() }

// IsLeader reports whether this server leads the cell.
func (s *Server) IsLeader() bool { return s.raft.raft.State() == raft.Leader }

// Close stops serving and shuts raft down; calling it again does nothing.
// Nothing is lost: state is in the raft log on disk.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Server) close() error {
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.httpSrv.Shutdown(shutdownCtx)
	if s.peerSrv != nil {
		s.peerSrv.Shutdown(shutdownCtx)
	}
	s.cancel()
	s.revokeLeadership()
	err := s.raft.Close()
	s.wg.Wait()
	return err
}

func (s *Server) monitorLeadership() {
	ch := s.raft.raft.LeaderCh()
	if s.IsLeader() {
		s.establishLeadership()
	}
	for {
		select {
		case <-s.ctx.Done():
			return
		case leader := <-ch:
			if leader {
				s.establishLeadership()
			} else {
				s.revokeLeadership()
			}
		}
	}
}

// establishLeadership starts the leader-only loops and restores the broker
// from state, so no pending or blocked evaluation is forgotten.
func (s *Server) establishLeadership() {
	s.leaderMu.Lock()
	defer s.leaderMu.Unlock()
	if s.leaderCancel != nil {
		return
	}
	// Everything committed in earlier terms is applied once a barrier of
	// this term returns; only then may the leader answer or act.
	term := s.raft.raft.CurrentTerm()
	for {
		err := s.raft.wait(s.raft.raft.Barrier(30 * time.Second))
		if err == nil {
			break
		}
		if s.ctx.Err() != nil || !s.IsLeader() {
			return
		}
		s.logger.Error("barrier on leadership; retrying", "err", err)
		time.Sleep(time.Second)
	}
	if !s.IsLeader() || s.raft.raft.CurrentTerm() != term {
		return // deposed meanwhile; the next LeaderCh signal decides
	}
	// A new cell gets its identity before its leader answers anyone.
	for {
		err := s.ensureCellID()
		if err == nil {
			break
		}
		if s.ctx.Err() != nil || !s.IsLeader() {
			return
		}
		s.logger.Error("create the cell identity; retrying", "err", err)
		time.Sleep(time.Second)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.leaderCancel = cancel
	s.term.Store(&ctx)
	s.broker.SetEnabled(true)
	snap := s.State().Snapshot()
	for _, e := range snap.Evals(nil) {
		switch e.Status {
		case api.EvalPending:
			s.broker.Enqueue(e)
		case api.EvalBlocked:
			s.broker.Enqueue(e) // capacity may have changed while no leader watched
		}
	}
	now := s.cfg.Now()
	for _, n := range snap.Nodes() {
		if n.Status != api.NodeDown {
			s.beats.Reset(n.ID, now) // a fresh grace period after a failover or restart
		}
	}
	for i := 0; i < s.cfg.Workers; i++ {
		w := &worker{srv: s, id: i}
		s.wg.Add(1)
		go func() { defer s.wg.Done(); w.run(ctx) }()
	}
	s.wg.Add(3)
	go func() { defer s.wg.Done(); s.plans.run(ctx) }()
	go func() { defer s.wg.Done(); s.watchHeartbeats(ctx) }()
	go func() { defer s.wg.Done(); s.drainer.run(ctx) }()
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.quarantines.run(ctx) }()
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.runGC(ctx) }()
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.runAuditor(ctx) }()
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.watchReverts(ctx) }()
	s.ensureJoinToken()
	s.ready.leaderEstablished(term)
	s.logger.Info("leadership established", "term", term, "workers", s.cfg.Workers)
	if s.raft.port != nil && !s.memberAtAddr() {
		// Our address changed (a lone server given --raft-addr, a new port):
		// tell the configuration, or the others cannot reach us.
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.addVoter(raft.ServerID(s.id), s.raft.addr()); err != nil {
				s.logger.Error("update this server's raft address", "addr", s.raft.addr(), "err", err)
			}
		}()
	}
}

func (s *Server) revokeLeadership() {
	s.leaderMu.Lock()
	defer s.leaderMu.Unlock()
	if s.leaderCancel == nil {
		return
	}
	s.term.Store(nil)
	s.leaderCancel()
	s.leaderCancel = nil
	s.broker.SetEnabled(false)
	s.beats.Clear()
}

// ErrNotLeader is returned by writes on a server that does not lead. The
// write was not applied: a client may retry it.
var ErrNotLeader = errors.New("this server is not the leader")

// ErrNoQuorum is not-leader from a server that has known no leader for
// far longer than an election takes (noQuorumAfter): it cannot reach a
// majority of the cell's voting servers. Answered 503 no-quorum; a
// client tries the other servers it knows, and gives up at once when none
// leads.
var ErrNoQuorum = errors.New("the cell has no quorum")

// ErrOutcomeUnknown is returned by a write whose raft entry may or may not
// be committed: leadership was lost, or raft shut down, after it was
// appended. A client must read before it retries a write that is not
// idempotent.
var ErrOutcomeUnknown = errors.New("the write may or may not have been applied")

// propose commits one command through raft and returns its index.
func (s *Server) propose(t commandType, body any) (uint64, error) {
	idx, _, err := s.proposeFor(t, body)
	return idx, err
}

// proposeFor is propose that also returns the FSM's answer to the command
// (see registered): what the entry did as it was applied, in log order.
func (s *Server) proposeFor(t commandType, body any) (uint64, any, error) {
	buf, err := encodeCommand(t, body)
	if err != nil {
		return 0, nil, err
	}
	return s.proposeEncoded(t, buf)
}

// proposeEncoded commits encoded commands of type t in order, handing them
// to raft together so that they share its batches, and returns the index
// of the last and the FSM's answer to it. An error names the first entry
// that failed; the entries before it are committed.
func (s *Server) proposeEncoded(t commandType, entries ...[]byte) (uint64, any, error) {
	start := time.Now()
	defer func() { s.metrics.raftCommit.Observe(time.Since(start).Seconds()) }()
	futures := make([]raft.ApplyFuture, len(entries))
	for i, buf := range entries {
		futures[i] = s.raft.raft.Apply(buf, 30*time.Second)
	}
	var index uint64
	var resp any
	for i, f := range futures {
		if err := s.raft.wait(f); err != nil {
			return 0, nil, proposeError(t, i, err)
		}
		resp = f.Response()
		if err, ok := resp.(error); ok && err != nil {
			return 0, nil, fmt.Errorf("apply %s: %w", t, err)
		}
		index = f.Index()
	}
	return index, resp, nil
}

// proposeError maps raft's error for entry i of a proposal: ErrNotLeader
// (a client may retry) only when nothing of it can have been applied,
// ErrOutcomeUnknown when some of it may have been.
func proposeError(t commandType, i int, err error) error {
	notAppended := errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrEnqueueTimeout)
	switch {
	case notAppended && i == 0:
		return ErrNotLeader
	case notAppended, errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrRaftShutdown), errors.Is(err, raft.ErrAbortedByRestore):
		return fmt.Errorf("raft apply %s (entry %d): %w: %v", t, i+1, ErrOutcomeUnknown, err)
	}
	return fmt.Errorf("raft apply %s: %w", t, err)
}

// afterApply runs on every server after the FSM applied a command; on the
// leader it feeds the broker. It must not block.
func (s *Server) afterApply(t commandType, body any, index uint64) {
	enqueue := func(evals []*api.Evaluation) {
		for _, e := range evals {
			if e != nil && e.Status == api.EvalPending {
				s.broker.Enqueue(e)
			}
		}
	}
	switch c := body.(type) {
	case *upsertWorkloadCmd:
		enqueue([]*api.Evaluation{c.Eval})
	case *stopWorkloadCmd:
		enqueue([]*api.Evaluation{c.Eval})
	case *upsertNodeCmd:
		enqueue(c.Evals)
		s.broker.Unblock()
	case *nodeStatusCmd:
		enqueue(c.Evals)
		if c.Status == api.NodeReady {
			s.broker.Unblock()
		}
	case *upsertEvalsCmd:
		enqueue(c.Evals)
	case *promoteDeploymentCmd:
		enqueue([]*api.Evaluation{c.Eval})
	case *failDeploymentCmd:
		enqueue([]*api.Evaluation{c.Eval})
		if c.Revert != nil {
			enqueue([]*api.Evaluation{c.Revert.Eval})
		}
	case *nodeOpCmd:
		enqueue(c.Evals)
		if c.Op == nodeOpEnable || c.Op == nodeOpLift {
			s.broker.Unblock() // the node takes work again
		}
	case *setCellSecretCmd:
		if c.Name == state.CellSecretJoinToken {
			s.writeJoinTokenFile(c.Value)
		}
	case *applyPlanCmd:
		enqueue(c.Evals)
		if c.Deployment != nil && c.Deployment.Status == api.DeploymentFailed {
			s.kickReverts()
		}
		if len(c.Stop) > 0 {
			s.broker.Unblock()
		}
	case *allocClientUpdateCmd:
		enqueue(c.Evals)
		for _, u := range c.Updates {
			switch u.ClientStatus {
			case api.AllocComplete, api.AllocFailed, api.AllocLost:
				s.broker.Unblock()
				return
			}
		}
	}
}

// newID returns a random UUID-formatted id. Only the proposal path calls it.
func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func loadOrCreateID(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	} else if !os.IsNotExist(err) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	id := newID()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("rename %s: %w", tmp, err)
	}
	return id, nil
}
