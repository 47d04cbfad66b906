package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/gc"
	"github.com/strata-dev/strata/internal/httpapi"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/incident"
	"github.com/strata-dev/strata/internal/keyring"
	"github.com/strata-dev/strata/internal/leader"
	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/quarantine"
	"github.com/strata-dev/strata/internal/replica"
	"github.com/strata-dev/strata/internal/state"
	"github.com/strata-dev/strata/internal/trigger"
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
	// (leader.HeartbeatPolicy).
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
	// AllowAnonymous lets callers who prove nothing use the API when ACLs
	// are off: without it, a TLS server's users' routes need a client
	// certificate of the cell (tls.go). A server that lets anonymous
	// callers in — this, or plaintext without ACLs — says so at start.
	AllowAnonymous bool
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

	// Incidents tunes the leader's incident engine and IncidentInterval
	// how often it passes (default 5s); RolloutGuard configures the guard
	// of deployments; AnomalyInterval is how often the control plane's
	// signals are sampled (default 10s). docs/incidents.md.
	Incidents        incident.Policy
	IncidentInterval time.Duration
	RolloutGuard     leader.GuardConfig
	AnomalyInterval  time.Duration

	// fsmApplyHook, when set, runs before the FSM applies each command
	// (tests use it to hold the replay at a chosen index).
	fsmApplyHook func(index uint64)
}

// Server is one control-plane server: the rooms, wired.
type Server struct {
	cfg    Config
	logger *slog.Logger
	id     string

	fsm      *fsm.FSM
	proposer *fsm.Proposer
	replica  *replica.Replica
	leader   *leader.Leader
	api      *httpapi.API
	metrics  *prometheus.Registry

	httpSrv  *http.Server
	listener net.Listener
	tls      *serverTLS // nil: plaintext

	// joinFileMu serialises writes of <data-dir>/join-token.
	joinFileMu sync.Mutex
	// started is when this server started: a server that has known no
	// leader since, for long, says the cell has no quorum (noQuorum).
	started time.Time
	// defaultNameMu serialises the registrations of new nodes named by
	// default, so two agents of one host started together do not both
	// take its name (defaultNameTaken).
	defaultNameMu sync.Mutex

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// New opens the server's data dir and raft log and starts serving HTTP.
// It returns at once; the server answers requests (other than
// /v1/status/*) only once Ready is closed: its state is replayed. Run (or
// Close) ends it.
func New(cfg Config) (*Server, error) {
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	id, err := loadOrCreateID(filepath.Join(cfg.DataDir, "server-id"))
	if err != nil {
		return nil, err
	}
	keys, err := keyring.LoadOrCreate(cfg.KeyringFile)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, logger: cfg.Logger.With("component", "server"), id: id, metrics: prometheus.NewRegistry()}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if cfg.TLS != nil {
		if s.tls, err = newServerTLS(cfg.TLS); err != nil {
			return nil, err
		}
	} else {
		s.logger.Warn("PLAINTEXT: this server's API and server port are not encrypted and do not authenticate their peers; use TLS (--tls-ca, --tls-cert, --tls-key) outside a test")
	}
	if !cfg.ACL && (cfg.TLS == nil || cfg.AllowAnonymous) {
		s.logger.Warn("ANONYMOUS: ACLs are off and callers need no client certificate: anyone who reaches the API can list, run and stop anything; use --acl, or TLS with client certificates, outside a test")
	}

	// The state machine and the way into it: commands are proposed
	// through the replica, once it is open (log).
	s.fsm = fsm.New(s.logger)
	log := &replicaLog{}
	s.proposer = fsm.NewProposer(log)
	maker := trigger.NewMaker(cfg.Now)
	audit := httpapi.NewAuditLog(s.proposer, s.logger)
	s.leader, err = leader.New(leader.Config{Workers: cfg.Workers, JoinToken: cfg.JoinToken,
		Heartbeats:    leader.HeartbeatPolicy{MinTTL: cfg.HeartbeatTTL, MinInterval: cfg.HeartbeatInterval, MaxPerSecond: cfg.MaxHeartbeatsPerSecond},
		DrainInterval: cfg.DrainInterval, AutoQuarantine: cfg.AutoQuarantine, QuarantineInterval: cfg.QuarantineInterval,
		GC: cfg.GC, GCInterval: cfg.GCInterval, Now: cfg.Now, Metrics: s.metrics, Logger: s.logger,
		Incidents: cfg.Incidents, IncidentInterval: cfg.IncidentInterval, RolloutGuard: cfg.RolloutGuard, AnomalyInterval: cfg.AnomalyInterval,
		// The API's audit log is committed by the leader, with its loops.
		Loops: []leader.Loop{{Name: "audit", Run: audit.Flush}}}, s.fsm, s.proposer, maker)
	if err != nil {
		return nil, err
	}
	s.fsm.OnApply = s.applied
	s.fsm.BeforeApply = cfg.fsmApplyHook

	// The API listens at once, but answers nothing from the state until the
	// FSM has applied everything committed (readiness): /v1/status/* says
	// how far it is.
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	s.listener = ln
	rc := replica.Config{DataDir: cfg.DataDir, ID: id, BindAddr: cfg.RaftAddr, Advertise: cfg.RaftAdvertise,
		BootstrapExpect: cfg.BootstrapExpect, Join: cfg.Join, Multiplier: cfg.RaftMultiplier, NoQuorumAfter: cfg.NoQuorumAfter, APIAddr: s.Addr(),
		HTTP: cfg.HTTP, Now: cfg.Now, Metrics: s.metrics, Logger: s.logger}
	if s.tls != nil {
		rc.PeerTLS, rc.DialTLS = s.tls.peer, s.tls.dial
	}
	if s.replica, err = replica.Open(rc, cellFSM{s.fsm}); err != nil {
		ln.Close()
		return nil, err
	}
	log.r = s.replica
	ac := httpapi.Config{ACL: cfg.ACL, HTTP: cfg.HTTP, Keyring: keys, Metrics: s.metrics, Gatherer: s.metrics, Audit: audit,
		AllowAnonymous: cfg.AllowAnonymous, Now: cfg.Now, Logger: s.logger}
	if s.tls != nil {
		ac.TLS, ac.AgentTLS, ac.VerifyClient = true, s.tls.agent, s.tls.verifyClient
	}
	if s.api, err = httpapi.New(ac, s.fsm, s.proposer, maker, s.replica, s.leader, s.replica.Routes()); err != nil {
		s.replica.Close()
		ln.Close()
		return nil, err
	}
	// The web UI (internal/ui) is served beside the API at /ui/.
	s.httpSrv = httplimit.NewServer(ui.Mount(s.api.Handler()), cfg.HTTP)
	s.wg.Add(2)
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
		s.watchReadiness()
	}()
	s.replica.Start(s.api.Handler(), s.leader)
	s.logger.Info("server started", "id", id, "http", s.Addr(), "raft", s.replica.Addr(), "data_dir", cfg.DataDir)
	return s, nil
}

// withDefaults fills cfg's zero fields and checks what it cannot fill.
func (cfg *Config) withDefaults() error {
	if cfg.DataDir == "" {
		return errors.New("server: data dir is required")
	}
	if cfg.HeartbeatTTL <= 0 {
		cfg.HeartbeatTTL = 10 * time.Second
	}
	if err := cfg.GC.Validate(); err != nil {
		return fmt.Errorf("server: gc: %w", err)
	}
	if w := cfg.AutoQuarantine.WithDefaults().Window; !cfg.GC.Off && !cfg.AutoQuarantine.Off && cfg.GC.WithDefaults().Allocations < w {
		return fmt.Errorf("server: gc: allocations: retention %s is shorter than the automatic quarantine's window %s, whose evidence it would delete", cfg.GC.WithDefaults().Allocations, w)
	}
	if err := cfg.AutoQuarantine.Validate(); err != nil {
		return fmt.Errorf("server: automatic quarantine: %w", err)
	}
	if cfg.BootstrapExpect < 0 {
		return errors.New("server: bootstrap-expect must not be negative")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.KeyringFile == "" {
		cfg.KeyringFile = filepath.Join(cfg.DataDir, keyring.FileName)
	}
	return nil
}

// applied is what the servers do after the FSM applied an entry: the
// leader's loops follow it, and every server keeps the join token file.
// It runs on the apply goroutine and must not block.
func (s *Server) applied(index uint64, e fsm.Effects) {
	s.leader.Applied(index, e)
	if e.JoinToken != "" {
		s.writeJoinTokenFile(e.JoinToken)
	}
}

// watchReadiness logs when the server first becomes ready; a follower's
// readiness is computed on demand, so it is polled here until then.
func (s *Server) watchReadiness() {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.replica.Serving() == nil {
			s.logger.Info("state replayed; serving", "index", s.fsm.AppliedIndex(), "leader", s.IsLeader())
			if token := s.JoinToken(); token != "" {
				s.writeJoinTokenFile(token) // a snapshot restore does not pass through applied
			}
			return
		}
		select {
		case <-s.ctx.Done():
			return
		case <-s.replica.Ready():
		case <-tick.C:
		}
	}
}

// Run serves until ctx ends, then closes the server (Close).
func (s *Server) Run(ctx context.Context) error {
	<-ctx.Done()
	return s.Close()
}

// Ready is closed once the server has first been ready to serve: its FSM
// applied everything committed.
func (s *Server) Ready() <-chan struct{} { return s.replica.Ready() }

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
func (s *Server) IsLeader() bool { return s.replica.IsLeader() }

// JoinToken returns the cell's join token as this server's state holds
// it ("" until the first leader set it). An agent needs it to register.
func (s *Server) JoinToken() string {
	return s.State().Snapshot().CellSecret(state.CellSecretJoinToken)
}

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
	s.cancel()
	err := s.replica.Close() // ends the leader's term: its loops stop
	s.leader.Wait()
	s.wg.Wait()
	return err
}

// replicaLog is the replica as the proposer's fsm.Log, bound once the
// replica is open: nothing proposes before (the leader's loops and the
// API start after).
type replicaLog struct{ r *replica.Replica }

func (l *replicaLog) Commit(name string, entries ...[]byte) (uint64, any, error) {
	return l.r.Commit(name, entries...)
}

// cellFSM is the cell's FSM as the replica sees it.
type cellFSM struct{ *fsm.FSM }

func (f cellFSM) Snapshot() replica.Snapshot { return f.FSM.Snapshot() }

// joinTokenFile is where a server writes the cell's join token, for agents
// on the same machine and test harnesses.
const joinTokenFile = "join-token"

// writeJoinTokenFile keeps <data-dir>/join-token equal to the cell's token.
func (s *Server) writeJoinTokenFile(token string) {
	s.joinFileMu.Lock()
	defer s.joinFileMu.Unlock()
	path := filepath.Join(s.cfg.DataDir, joinTokenFile)
	if b, err := os.ReadFile(path); err == nil && string(b) == token+"\n" {
		return
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(token+"\n"), 0o600); err != nil {
		s.logger.Error("write the join token file", "path", tmp, "err", err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		s.logger.Error("write the join token file", "path", path, "err", err)
	}
}

// loadOrCreateID returns the server's id, kept in path.
func loadOrCreateID(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	} else if !os.IsNotExist(err) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	id := trigger.NewID()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("rename %s: %w", tmp, err)
	}
	return id, nil
}

// The defaults of Config's heartbeat settings (leader.HeartbeatPolicy).
const (
	DefaultHeartbeatInterval      = leader.DefaultHeartbeatInterval
	DefaultMaxHeartbeatsPerSecond = leader.DefaultMaxHeartbeatsPerSecond
)
