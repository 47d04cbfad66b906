package nodesim

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers/mock"
	"github.com/strata-dev/strata/internal/nodeauth"
)

// Config configures a Sim. Zero values take the documented defaults.
type Config struct {
	// Servers are the cell's server addresses; each node starts at a
	// random one and fails over to the others, as agents do. Required.
	Servers []string
	// Count is the number of simulated nodes. Required.
	Count int
	// Prefix names the nodes Prefix-000000, Prefix-000001, …; default "sim".
	Prefix string
	Shape  Shape
	// RegisterWorkers bounds the registrations in flight; default Workers.
	// Registrations have their own workers so that a mass registration
	// never delays the heartbeats of the nodes already registered (which
	// would make the server mark them down: not what real agents do).
	RegisterWorkers int
	// Workers bounds the heartbeats in
	// flight; default 64.
	Workers int
	// Watch makes every node watch its allocations with a blocking query
	// (one connection per node) and run them; off, nodes only register
	// and heartbeat.
	Watch bool
	// WatchWait is the blocking queries' wait, default 30s (the agent's).
	WatchWait time.Duration
	// MaxConns caps the connections to each server. Default (0): the most
	// requests nodesim has in flight, Workers + RegisterWorkers, plus Count
	// with Watch (one request per node at a time: watch, then report), so
	// idle connections never push the total past what is in use. With
	// Watch a cap below Count makes watches queue behind each other.
	MaxConns int
	// FirstInterval is how often a node heartbeats before the server has
	// said; default 1s (the agent's).
	FirstInterval time.Duration
	// OnRunning, when set, is called once for every allocation reported
	// running, with the time the report was acknowledged.
	OnRunning func(a *api.Allocation, at time.Time)
	Logger    *slog.Logger
	// JoinToken is the cell's join token: every simulated node registers
	// with it and a secret of its own, as an agent does (docs/security.md).
	JoinToken string
	// Secrets are the nodes' secrets by node index: a node registers
	// with its own, so that a run given the secrets of an earlier one
	// brings the same nodes back (the server refuses a node id to any
	// other secret). A missing or empty entry gets a new secret; Secrets
	// reports every node's.
	Secrets []string
	// TLS, when set, is the client TLS configuration (an agent
	// certificate and the cell's CA); the servers are then reached over
	// https.
	TLS *tls.Config
}

func (c *Config) setDefaults() error {
	switch {
	case len(c.Servers) == 0:
		return errors.New("nodesim: Servers: at least one server address is required")
	case c.Count <= 0:
		return fmt.Errorf("nodesim: Count: must be positive, got %d", c.Count)
	}
	if c.Prefix == "" {
		c.Prefix = "sim"
	}
	if c.Workers <= 0 {
		c.Workers = 64
	}
	if c.RegisterWorkers <= 0 {
		c.RegisterWorkers = c.Workers
	}
	if c.MaxConns <= 0 {
		c.MaxConns = c.Workers + c.RegisterWorkers
		if c.Watch {
			c.MaxConns += c.Count
		}
	}
	if c.WatchWait <= 0 {
		c.WatchWait = 30 * time.Second
	}
	if c.FirstInterval <= 0 {
		c.FirstInterval = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// Sim is a set of simulated nodes. Create it with New and run it with Run.
type Sim struct {
	cfg    Config
	nodes  []*simNode
	http   *http.Client
	driver *mock.Driver
	stats  Stats
	start  time.Time

	registerQ chan int // nodes to register, each at most once
	mu        sync.Mutex
	sched     schedule
	wake      chan struct{}
}

// New prepares count nodes; it sends nothing.
func New(cfg Config) (*Sim, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	s := &Sim{cfg: cfg, driver: mock.New(), wake: make(chan struct{}, 1), start: time.Now(),
		registerQ: make(chan int, cfg.Count)}
	s.http = &http.Client{Transport: newTransport(cfg)}
	for i := range cfg.Count {
		servers := append([]string(nil), cfg.Servers...)
		rand.Shuffle(len(servers), func(a, b int) { servers[a], servers[b] = servers[b], servers[a] })
		if cfg.TLS != nil {
			for j, a := range servers {
				if !strings.Contains(a, "://") {
					servers[j] = "https://" + a
				}
			}
		}
		c := api.NewClientFor(servers)
		c.HTTP = s.http // one transport for the whole simulation
		node := cfg.Shape.Node(cfg.Prefix, i)
		secret := ""
		if i < len(cfg.Secrets) {
			secret = cfg.Secrets[i]
		}
		if secret == "" {
			secret = nodeauth.NewSecret()
		}
		c.Node = &api.NodeIdentity{ID: node.ID, Secret: secret, JoinToken: cfg.JoinToken}
		s.nodes = append(s.nodes, &simNode{sim: s, index: i, node: node, client: c,
			registeredCh: make(chan struct{}), allocs: map[string]*simAlloc{}})
	}
	return s, nil
}

// Secrets returns every node's secret by node index: those of
// Config.Secrets and the new ones, for the caller to keep.
func (s *Sim) Secrets() []string {
	out := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = n.client.Node.Secret
	}
	return out
}

// newTransport is the one HTTP transport every simulated node shares.
func newTransport(cfg Config) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = cfg.TLS
	t.DialContext = (&net.Dialer{Timeout: 3 * time.Second, KeepAlive: 15 * time.Second}).DialContext
	idle := cfg.Workers + cfg.RegisterWorkers
	if cfg.Watch {
		idle += cfg.Count
	}
	t.MaxIdleConns = idle
	t.MaxIdleConnsPerHost = idle
	t.MaxConnsPerHost = cfg.MaxConns
	return t
}

// Stats returns the counters so far; Elapsed counts from New.
func (s *Sim) Stats() Snapshot {
	return s.stats.snapshot(time.Since(s.start), s.cfg.Count).withUsage()
}

// Run registers every node, then heartbeats, watches and reports until ctx
// is done. It returns once every request it started has ended; the server
// is not told that the nodes went away (they go down after their TTL).
func (s *Sim) Run(ctx context.Context) error {
	for _, n := range s.nodes {
		n.queueRegister()
	}

	jobs := make(chan int)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		s.dispatch(ctx, jobs)
	}()
	for range s.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s.nodes[i].heartbeat(ctx)
			}
		}()
	}
	for range s.cfg.RegisterWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case i := <-s.registerQ:
					s.nodes[i].register(ctx)
				}
			}
		}()
	}
	if s.cfg.Watch {
		for _, n := range s.nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n.watch(ctx)
			}()
		}
	}
	wg.Wait()
	s.http.CloseIdleConnections()
	return nil
}

// dispatch hands due nodes to the workers, earliest first. When the
// workers cannot keep up, nodes wait here and their heartbeats are late:
// Stats counts them.
func (s *Sim) dispatch(ctx context.Context, jobs chan<- int) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		s.mu.Lock()
		ready := s.sched.PopDue(now, s.cfg.Workers)
		next, ok := s.sched.Next()
		s.mu.Unlock()
		for _, d := range ready {
			select {
			case jobs <- d.node:
			case <-ctx.Done():
				return
			}
		}
		if len(ready) > 0 {
			continue
		}
		wait := time.Hour
		if ok {
			wait = time.Until(next)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-timer.C:
		}
	}
}

// reschedule makes node due again after d.
func (s *Sim) reschedule(node int, d time.Duration) {
	at := time.Now().Add(d)
	s.mu.Lock()
	next, ok := s.sched.Next()
	s.sched.Add(node, at)
	s.mu.Unlock()
	if !ok || at.Before(next) {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// atomicDuration is a time.Duration read and written atomically.
type atomicDuration struct{ v atomic.Int64 }

func (d *atomicDuration) Load() time.Duration   { return time.Duration(d.v.Load()) }
func (d *atomicDuration) Store(v time.Duration) { d.v.Store(int64(v)) }

// storeMax raises the value to v if v is larger.
func (d *atomicDuration) storeMax(v time.Duration) {
	for {
		old := d.v.Load()
		if int64(v) <= old || d.v.CompareAndSwap(old, int64(v)) {
			return
		}
	}
}
