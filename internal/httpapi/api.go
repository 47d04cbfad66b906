package httpapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/keyring"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/state"
	"github.com/strata-dev/strata/internal/trigger"
)

// Config configures the API.
type Config struct {
	// ACL turns ACLs on (docs/security.md): every request but the status
	// endpoints and the agents' own needs a token whose policies grant
	// what it does.
	ACL bool
	// TLS says the API serves HTTPS: an agent's call must then come with
	// a certificate of role agent. AgentTLS is the client configuration
	// logs are fetched from agents with (nil: plaintext).
	TLS      bool
	AgentTLS *tls.Config
	// VerifyClient checks a client's certificate chain as the API's
	// listener does: the API runs it again on a chain a follower carried
	// (client_cert.go).
	VerifyClient func(chain []*x509.Certificate) error
	// AllowAnonymous lets callers who prove nothing use the users' routes
	// of a TLS cell without ACLs, where client certificates authenticate
	// them otherwise. The server says so loudly.
	AllowAnonymous bool
	// HTTP are the API's timeouts; blocking queries and streams extend
	// them per request.
	HTTP httplimit.Config
	// Keyring seals workload secrets before they enter the log.
	Keyring *keyring.Keyring
	// Metrics registers the API's metrics; Gatherer serves every
	// registered metric at /metrics.
	Metrics  prometheus.Registerer
	Gatherer prometheus.Gatherer
	// Audit records writes (NewAuditLog); the leader runs its flush.
	Audit *AuditLog
	Now   func() time.Time
	// Logger is required.
	Logger *slog.Logger
}

// Replica is what the API asks of this server's replica
// (internal/replica): where a request is served, and the leader's word.
type Replica interface {
	// Gate serves rt's requests where they belong: at once, by the
	// leader, forwarded to it, or from this server's state with ?stale.
	Gate(rt route.Route, next http.Handler) http.Handler
	IsLeader() bool
	// ConfirmLeadership checks with a quorum that this server still
	// leads (a 404 answered from its state is then fresh).
	ConfirmLeadership() error
	// AppliedIndex is the raft index this server applied: agents compare
	// answers by it.
	AppliedIndex() uint64
}

// Leader is what the API asks of the leader's loops (internal/leader).
type Leader interface {
	// Heartbeat renews a node's lease; it returns the interval and TTL
	// the node is told.
	Heartbeat(node string, now time.Time) (interval, ttl time.Duration)
	// Forget stops tracking a purged node.
	Forget(node string)
	// DrainWants reports whether a workload (fsm.Qualified) has
	// allocations left on a draining node.
	DrainWants(workload string) bool
	// PlanMigration builds a migration of a, or refuses it.
	PlanMigration(snap *state.Snapshot, a *api.Allocation, req api.MigrateRequest) (*api.Migration, error)
	// CommitMove commits a migration step; a move's commit goes through
	// the single writer of placements.
	CommitMove(ctx context.Context, cmd *fsm.Migrate) (uint64, any, error)
	// DryRun runs the scheduler without committing (`strata plan`).
	DryRun(snap *state.Snapshot, view func(scheduler.State) scheduler.State, eval *api.Evaluation, now time.Time) *api.Plan
	// Incidents lists the incidents the leader correlated (status: open,
	// closed, or both when empty), Incident one of them, IncidentOf the
	// one an event is part of ("" if none). docs/incidents.md.
	Incidents(status string) []*api.Incident
	Incident(id string) (*api.Incident, bool)
	IncidentOf(eventID string) string
	// Guard is what the rollout guard has seen of a deployment under way
	// (nil when none judges it).
	Guard(deploymentID string) *api.DeploymentGuard
}

// API is the cell's HTTP+JSON API: the table of routes and the one
// wrapper every route goes through.
type API struct {
	cfg      Config
	logger   *slog.Logger
	fsm      *fsm.FSM
	proposer *fsm.Proposer
	make     *trigger.Maker
	replica  Replica
	leader   Leader
	audit    *AuditLog
	metrics  *metrics
	// agentHTTP fetches logs from agents.
	agentHTTP *http.Client
	// defaultNameMu serialises the registrations of new nodes named by
	// default, so two agents of one host started together do not both
	// take its name (defaultNameTaken).
	defaultNameMu sync.Mutex

	table   route.Group
	handler http.Handler
}

// New builds the API over the cell's state (f), proposing through p and
// making evaluations with maker; groups are the routes of other rooms (the
// replica's status and operator routes, a UI's) mounted beside the API's
// own. It refuses a table with a pattern twice or a route without a rule.
func New(cfg Config, f *fsm.FSM, p *fsm.Proposer, maker *trigger.Maker, rep Replica, lead Leader, groups ...route.Group) (*API, error) {
	if cfg.Logger == nil || cfg.Audit == nil {
		return nil, errors.New("httpapi: logger and audit log are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Metrics == nil || cfg.Gatherer == nil {
		reg := prometheus.NewRegistry()
		cfg.Metrics, cfg.Gatherer = reg, reg
	}
	s := &API{cfg: cfg, logger: cfg.Logger, fsm: f, proposer: p, make: maker, replica: rep, leader: lead, audit: cfg.Audit,
		metrics: newMetrics(cfg.Metrics, cfg.Gatherer), agentHTTP: newAgentHTTP(cfg.AgentTLS)}
	table := append(route.Group{}, s.routes()...)
	for _, g := range groups {
		table = append(table, g...)
	}
	h, err := s.mount(table)
	if err != nil {
		return nil, err
	}
	s.table, s.handler = table, h
	return s, nil
}

// Handler serves the API: the listener's and the server port's (for
// requests followers forward).
func (s *API) Handler() http.Handler { return s.handler }

// Table is every route the API serves, its own and its groups', in the
// order they were given.
func (s *API) Table() route.Group { return s.table }

// state is the FSM's store.
func (s *API) state() *state.Store { return s.fsm.State() }

// propose commits one command and returns its index.
func (s *API) propose(body any) (uint64, error) {
	idx, _, err := s.proposer.Propose(body)
	return idx, err
}

// newAgentHTTP is the client that fetches logs from agents: it follows no
// redirect (the server talks to the registered address only, and relays
// only what that node's agent proved it sent) and, with TLS, presents the
// server's certificate and accepts only an agent's.
func newAgentHTTP(agentTLS *tls.Config) *http.Client {
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		ResponseHeaderTimeout: 10 * time.Second,
	}
	if agentTLS != nil {
		tr.TLSClientConfig = agentTLS
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
