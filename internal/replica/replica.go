package replica

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-dev/strata/internal/httplimit"
)

// Config says how to open a replica. DataDir, ID and Logger are required.
type Config struct {
	// DataDir holds raft's log, stable store and snapshots (<DataDir>/raft)
	// and spools operator snapshot files.
	DataDir string
	// ID is this server's raft id, stable across restarts.
	ID string
	// BindAddr is the server port (raft, formation and forwarded requests,
	// internal/serverport). Empty: a lone server over an in-memory
	// transport, which can never grow a cell.
	BindAddr string
	// Advertise is the address other servers dial, default BindAddr.
	Advertise string
	// BootstrapExpect is how many servers form a new cell (formation.go).
	BootstrapExpect int
	// Join lists other servers' server ports.
	Join []string
	// Multiplier scales raft's timeouts (default 1).
	Multiplier int
	// NoQuorumAfter is how long a server must have known no leader before
	// it answers no-quorum instead of not-leader (default 15s times
	// Multiplier).
	NoQuorumAfter time.Duration
	// APIAddr is this server's API URL, told to the other servers.
	APIAddr string
	// PeerTLS and DialTLS, when set, make the server port mutual TLS:
	// the configurations that accept and dial other servers.
	PeerTLS, DialTLS *tls.Config
	// HTTP sets the server port's HTTP timeouts (docs/limits.md).
	HTTP httplimit.Config
	// Now is the clock of formation's freshness; default time.Now.
	Now func() time.Time
	// Metrics, when set, registers the replica's metrics.
	Metrics prometheus.Registerer
	Logger  *slog.Logger
}

// FSM is the state machine a replica replicates. Apply is called for every
// committed command in log order, on one goroutine; Snapshot and Restore
// too. Nothing in it may depend on which server applies it.
type FSM interface {
	// Apply applies the command entry at index and returns its answer to
	// the proposer (an error included).
	Apply(index uint64, entry []byte) any
	// AppliedIndex is the index of the last entry Apply finished.
	AppliedIndex() uint64
	// Snapshot captures the state; it may be encoded later, while Apply
	// goes on.
	Snapshot() Snapshot
	// Restore replaces the state with a snapshot's; Verify checks one
	// decodes, changing nothing.
	Restore(r io.Reader) error
	Verify(r io.Reader) error
}

// Snapshot is an FSM's state at one index.
type Snapshot interface {
	Index() uint64
	Encode(w io.Writer) error
}

// Leadership is what the control plane built on a replica does while this
// server leads. Lead and Follow are called by the replica's one leadership
// goroutine, never at once.
type Leadership interface {
	// Lead starts a term: it runs once a barrier of the term returned, so
	// every entry of earlier terms is applied. ctx ends with the term.
	// Lead must return promptly (long work runs under ctx); an error is
	// retried every second while the term lasts. The server answers as
	// the leader only once Lead returned nil.
	Lead(ctx context.Context) error
	// Follow ends a term, after its ctx was cancelled. It must not block.
	Follow()
}

// Replica is one server's raft: its log, its part in forming the cell,
// its readiness, and the leader's term.
type Replica struct {
	cfg    Config
	logger *slog.Logger
	fsm    FSM
	lead   Leadership // set by Start
	raft   *raftNode
	ready  *readiness

	metrics *metrics

	// The server port's HTTP: formation and forwarding.
	peerSrv  *http.Server
	peerHTTP *http.Client
	peers    peerBook

	leadership *leadership
	// started is when this replica opened: one that has known no leader
	// since, for long, says the cell has no quorum (noQuorum).
	started time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// Open opens the replica's raft log in cfg.DataDir and its server port;
// raft starts applying the log to f at once. It starts nothing else: Start
// does, once the API that forwarded requests reach is built.
func Open(cfg Config, f FSM) (*Replica, error) {
	if cfg.DataDir == "" || cfg.ID == "" || cfg.Logger == nil {
		return nil, errors.New("replica: data dir, id and logger are required")
	}
	if cfg.BootstrapExpect < 0 {
		return nil, errors.New("server: bootstrap-expect must not be negative")
	}
	if cfg.BindAddr == "" && (cfg.BootstrapExpect > 1 || len(cfg.Join) > 0) {
		return nil, errors.New("server: a cell of several servers needs a raft address (--raft-addr) for the servers to reach each other")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Replica{cfg: cfg, logger: cfg.Logger, fsm: f, started: time.Now()}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	var err error
	r.raft, err = openRaft(raftOptions{dataDir: cfg.DataDir, serverID: cfg.ID, bindAddr: cfg.BindAddr, advertise: cfg.Advertise,
		multiplier: cfg.Multiplier, bootstrapAlone: cfg.BootstrapExpect <= 1 && len(cfg.Join) == 0, logger: r.logger,
		peerTLS: cfg.PeerTLS, dialTLS: cfg.DialTLS}, raftFSM{f})
	if err != nil {
		return nil, err
	}
	r.ready = newReadiness(r.raft.raft, r.raft.logStore, f, r.raft.observer)
	r.leadership = newLeadership(r)
	if cfg.Metrics != nil {
		r.metrics = newMetrics(r, cfg.Metrics)
	} else {
		r.metrics = newMetrics(r, prometheus.NewRegistry())
	}
	return r, nil
}

// Start serves the server port (api serves the requests followers
// forward), forms the cell and follows leadership, handing its terms to
// lead, until Close. It is called once.
func (r *Replica) Start(api http.Handler, lead Leadership) {
	r.lead = lead
	r.observeLeaderChanges()
	if port := r.raft.port; port != nil {
		r.peerHTTP = newPeerHTTP(port)
		// The server port has the API's timeouts but no per-client caps: a
		// follower forwards all its clients' requests over its connections.
		r.peerSrv = httplimit.NewServer(r.peerRoutes(api), r.cfg.HTTP)
		r.wg.Add(2)
		go func() {
			defer r.wg.Done()
			if err := r.peerSrv.Serve(port.HTTP()); err != nil && !errors.Is(err, http.ErrServerClosed) {
				r.logger.Error("server port http", "err", err)
			}
		}()
		go func() {
			defer r.wg.Done()
			r.formCell(r.ctx)
		}()
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.leadership.run(r.ctx)
	}()
}

// peerRoutes is the handler of the server port's HTTP: the servers'
// formation calls, and the whole API for requests followers forward.
func (r *Replica) peerRoutes(api http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/internal/hello", r.handleHello)
	mux.HandleFunc("POST /v1/internal/join", r.handleJoin)
	mux.Handle("/", viaServerPort(api))
	return mux
}

// Close ends the leader's term, stops serving the server port and shuts
// raft down; calling it again does nothing. Nothing committed is lost: it
// is in the log on disk.
func (r *Replica) Close() error {
	r.closeOnce.Do(func() { r.closeErr = r.close() })
	return r.closeErr
}

func (r *Replica) close() error {
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r.peerSrv != nil {
		r.peerSrv.Shutdown(shutdownCtx)
	}
	r.cancel() // the leadership goroutine ends the term and returns
	r.leadership.wait()
	err := r.raft.Close()
	r.wg.Wait()
	return err
}

// Ready is closed once the server has first been ready to serve: its FSM
// applied everything committed (readiness.go).
func (r *Replica) Ready() <-chan struct{} { return r.ready.ready }

// Serving reports whether the server answers from its state now (nil) or
// why not: a ready leader, or a follower that caught up once.
func (r *Replica) Serving() error { return r.ready.local() }

// IsLeader reports whether this server leads the cell.
func (r *Replica) IsLeader() bool { return r.raft.raft.State() == raft.Leader }

// AppliedIndex is raft's applied index: it only grows, across restarts
// and snapshot restores, and on a ready server every committed entry
// below it is applied. Agents compare answers by it.
func (r *Replica) AppliedIndex() uint64 { return r.raft.raft.AppliedIndex() }

// Addr is the raft address other servers reach this one at.
func (r *Replica) Addr() string { return string(r.raft.addr()) }

// LeaderID is the id of the leader this server knows, "" for none.
func (r *Replica) LeaderID() string {
	_, id := r.raft.raft.LeaderWithID()
	return string(id)
}

// LogStore is raft's log, for tests that read the entries written.
func (r *Replica) LogStore() raft.LogStore { return r.raft.logStore }
