package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/strata-dev/strata/internal/backoff"
)

// How the client reaches a cell of several servers:
//
//   - It holds a list of server addresses and sends each request to the one
//     that answered last, moving to the next on failure.
//   - It retries, on the next server and with a jittered backoff (50 ms
//     growing to 500 ms, internal/backoff), what it knows was not applied: a request that could
//     not be sent (connection refused, no route), and the servers' 503
//     not-leader and not-ready answers (an election or a replay is under
//     way; the server guarantees it did nothing).
//   - Idempotent requests (reads, heartbeats, status reports, replacing the
//     cell configuration) are also retried after a failure in flight, and
//     after the 502 a follower answers when the leader it forwarded to died.
//   - A request that is not idempotent (registering a workload, a purge)
//     that failed in flight is not retried: its error wraps
//     ErrOutcomeUnknown, and the caller reads before it decides.
//   - It gives up after RetryFor (default 30 s) or when ctx ends, and
//     quickly when no server at all accepts connections (no cell there).

// ErrOutcomeUnknown is wrapped by the error of a write that failed after it
// was sent: it may or may not have been applied.
var ErrOutcomeUnknown = errors.New("the request may or may not have been applied")

// DefaultRetryFor is how long a call keeps retrying by default.
const DefaultRetryFor = 30 * time.Second

// Client talks to a Strata cell's /v1 API through any of its servers. It
// is safe for concurrent use.
type Client struct {
	// HTTP sends the requests; its own Timeout, if any, bounds each attempt.
	HTTP *http.Client
	// RetryFor bounds how long a call keeps retrying; default
	// DefaultRetryFor. ctx may end it sooner.
	RetryFor time.Duration
	// AttemptTimeout bounds one attempt of a call (plus a blocking
	// query's wait; streams are not bounded): a server that accepted the
	// request and does not answer in time (paused, or forwarding to a
	// paused leader) is then left for the next one, as after any failure
	// in flight. Default DefaultAttemptTimeout. A caller that must get
	// through within a deadline (an agent's heartbeats within the TTL)
	// sets it well below that deadline.
	AttemptTimeout time.Duration
	// Token is the ACL token sent with every request (NewClient takes
	// $STRATA_TOKEN); empty sends none.
	Token string
	// Node, when set, authenticates every request as that node (an agent).
	Node *NodeIdentity
	// Namespace, when set, is sent as ?namespace= with every request but
	// the agents' (NewClient takes $STRATA_NAMESPACE); empty: the
	// server's default namespace.
	Namespace string

	addrs []string
	// configErr fails every call: the client's configuration is unusable.
	configErr error
	mu        sync.Mutex
	last      int // index of the server that answered last
}

// NewClient returns a client for addr, one server address or a
// comma-separated list of them; empty means $STRATA_ADDR, then DefaultAddr.
// An address without a scheme gets http://.
//
// $STRATA_TOKEN is its ACL token. $STRATA_CACERT (and, for mutual TLS,
// $STRATA_CLIENT_CERT and $STRATA_CLIENT_KEY) make it speak TLS to servers
// of that CA; an address without a scheme then gets https://. A TLS file
// that cannot be loaded fails every call with the reason.
func NewClient(addr string) *Client {
	c, err := NewClientWithTLS(addr, os.Getenv("STRATA_CACERT"), os.Getenv("STRATA_CLIENT_CERT"), os.Getenv("STRATA_CLIENT_KEY"))
	if err != nil {
		c = NewClientFor(splitAddrs(addr, false))
		c.configErr = err
	}
	return c
}

// NewClientWithTLS is NewClient with the TLS files given (caFile empty:
// plaintext).
func NewClientWithTLS(addr, caFile, certFile, keyFile string) (*Client, error) {
	var cfg *tls.Config
	if caFile != "" {
		var err error
		if cfg, err = ClientTLS(caFile, certFile, keyFile, TLSRoleServer); err != nil {
			return nil, fmt.Errorf("TLS ($STRATA_CACERT, $STRATA_CLIENT_CERT, $STRATA_CLIENT_KEY): %w", err)
		}
	}
	c := NewClientFor(splitAddrs(addr, cfg != nil))
	c.Token = strings.TrimSpace(os.Getenv("STRATA_TOKEN"))
	c.Namespace = strings.TrimSpace(os.Getenv("STRATA_NAMESPACE"))
	if cfg != nil {
		c.SetTLS(cfg)
	}
	return c, nil
}

// splitAddrs reads an address list (empty: $STRATA_ADDR, then the
// default), giving addresses without a scheme https:// when secure.
func splitAddrs(addr string, secure bool) []string {
	if strings.TrimSpace(addr) == "" {
		addr = os.Getenv("STRATA_ADDR")
	}
	if strings.TrimSpace(addr) == "" {
		addr = DefaultAddr
		if secure {
			addr = "https://" + strings.TrimPrefix(DefaultAddr, "http://")
		}
	}
	var out []string
	for _, a := range strings.Split(addr, ",") {
		a = strings.TrimSpace(a)
		if a != "" && secure && !strings.Contains(a, "://") {
			a = "https://" + a
		}
		out = append(out, a)
	}
	return out
}

// SetTLS makes the client speak TLS with cfg.
func (c *Client) SetTLS(cfg *tls.Config) {
	if t, ok := c.HTTP.Transport.(*http.Transport); ok {
		t.TLSClientConfig = cfg
	}
}

// NewClientFor returns a client for a list of server addresses.
func NewClientFor(addrs []string) *Client {
	c := &Client{HTTP: &http.Client{Transport: defaultTransport()}}
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if !strings.Contains(a, "://") {
			a = "http://" + a
		}
		c.addrs = append(c.addrs, strings.TrimRight(a, "/"))
	}
	if len(c.addrs) == 0 {
		c.addrs = []string{DefaultAddr}
	}
	for _, a := range c.addrs {
		if err := checkAddr(a); err != nil {
			c.configErr = err
			break
		}
	}
	return c
}

func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// A dead or cut-off server must not hold a call for long: the next
	// server is tried instead.
	t.DialContext = (&net.Dialer{Timeout: 3 * time.Second, KeepAlive: 15 * time.Second}).DialContext
	t.MaxIdleConnsPerHost = 16
	return t
}

// Addrs returns the server addresses the client uses, in order.
func (c *Client) Addrs() []string { return append([]string(nil), c.addrs...) }

// SkipServer makes the next request start at the server after addr, when
// addr (a QueryMeta.Server) is the one the client would start at: for a
// caller that found that server's answer unusable although it was a
// success, such as an agent refusing a server of another cell. A client of
// one server ignores it.
func (c *Client) SkipServer(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.addrs[c.last] == addr {
		c.last = (c.last + 1) % len(c.addrs)
	}
}

// Addr returns the address of the server that answered last (the first
// one before any answer).
func (c *Client) Addr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addrs[c.last]
}

// QueryMeta is what a read's answer says besides its body.
type QueryMeta struct {
	// Index is the state index of the read, for the next blocking query.
	Index uint64
	// KnownLeader and LastContact describe the answering server: whether
	// it knows a leader, and how long ago it heard from it (0 on the
	// leader). They matter for Stale reads.
	KnownLeader bool
	LastContact time.Duration
	// CellID and AppliedIndex say which cell answered and how far its
	// state is applied (raft's index); set on the answers agents act on
	// (CellHeader, AppliedIndexHeader).
	CellID       string
	AppliedIndex uint64
	// Server is the address (as given to the client) of the server that
	// answered.
	Server string
}

// Headers of the answers agents act on (registration, heartbeat, their
// allocation list): the cell's identity and the answering server's applied
// raft index. An agent refuses desired state from another cell or from a
// server behind what it has seen (docs/agent-safety.md).
const (
	CellHeader         = "X-Strata-Cell"
	AppliedIndexHeader = "X-Strata-Applied-Index"
)

// request is one call of the API.
type request struct {
	method, path string
	body         []byte
	contentType  string
	// idempotent: sending it twice has the effect of sending it once, so it
	// may be retried after a failure in flight.
	idempotent bool
	// wait is a blocking query's wait: each attempt may last that long.
	wait time.Duration
	// stream: the caller reads the body (no per-attempt timeout).
	stream bool
	// open, when set instead of body, opens the body for each attempt (a
	// large file).
	open func() (io.ReadCloser, error)
	// header holds headers of this request besides the client's own.
	header http.Header
}

// retryWaits bound the wait between rounds of retries: jittered, from
// 50ms to 500ms.
var retryWaits = backoff.Policy{Base: 50 * time.Millisecond, Max: 500 * time.Millisecond}

// DefaultAttemptTimeout bounds one attempt that has no wait: a server
// answers a read at once and a write within its raft timeout (30 s).
const DefaultAttemptTimeout = 40 * time.Second

// do sends req with failover and retries, and decodes a 2xx answer into out.
func (c *Client) do(ctx context.Context, req request, out any) (QueryMeta, error) {
	resp, cancel, err := c.send(ctx, req)
	if err != nil {
		return QueryMeta{}, err
	}
	defer cancel()
	defer resp.Body.Close()
	meta := queryMeta(resp)
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return meta, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return meta, fmt.Errorf("%s %s: decode response: %w", req.method, req.path, err)
	}
	return meta, nil
}

// send returns the first 2xx answer to req (the caller closes its body and
// then calls cancel), or the error that ends the retries.
func (c *Client) send(ctx context.Context, req request) (*http.Response, context.CancelFunc, error) {
	if c.configErr != nil {
		return nil, nil, c.configErr
	}
	retryFor := c.RetryFor
	if retryFor <= 0 {
		retryFor = DefaultRetryFor
	}
	giveUp := time.Now().Add(retryFor)
	var wait time.Duration // the last round's (internal/backoff)
	c.mu.Lock()
	start := c.last
	c.mu.Unlock()
	n := len(c.addrs)
	refused := 0 // consecutive attempts whose connection was refused
	// noQuorum and roundRefused count, in the current round over the
	// servers, the answers "no quorum" and the servers not reached.
	noQuorum, roundRefused := 0, 0
	for attempt := 0; ; attempt++ {
		i := (start + attempt) % n
		resp, cancel, err := c.attempt(ctx, c.addrs[i], req)
		if err == nil && resp.StatusCode < 300 {
			c.mu.Lock()
			c.last = i
			c.mu.Unlock()
			return resp, cancel, nil
		}
		var retry bool
		if err != nil {
			cancel()
			if ctx.Err() != nil {
				// The caller's time ran out while this server held the
				// call (paused, or forwarding to a paused leader): the
				// next call starts at the next server, or a caller whose
				// deadline is shorter than AttemptTimeout (an agent's
				// heartbeat) would wait on the same hung server for ever.
				c.SkipServer(c.addrs[i])
				return nil, nil, fmt.Errorf("%s %s: %w", req.method, req.path, ctx.Err())
			}
			notSent := notSent(err)
			if notSent && isRefused(err) {
				refused++
			} else {
				refused = 0
			}
			if notSent {
				roundRefused++
			}
			if fix, ok := hopeless(err, c.addrs[i]); ok {
				return nil, nil, fmt.Errorf("%s %s via %s: %w\n%s", req.method, req.path, c.addrs[i], err, fix)
			}
			if untrusted(err) {
				// The server's certificate is not the cell's (or not a
				// server's): no other attempt will change that.
				return nil, nil, fmt.Errorf("%s %s via %s: %w", req.method, req.path, c.addrs[i], err)
			}
			if !notSent && !req.idempotent {
				return nil, nil, fmt.Errorf("%s %s via %s: %w: %w", req.method, req.path, c.addrs[i], ErrOutcomeUnknown, err)
			}
			err = fmt.Errorf("%s %s via %s: %w", req.method, req.path, c.addrs[i], err)
			retry = true
			// Nobody listens anywhere: there is no cell to wait for.
			if refused >= 2*n {
				return nil, nil, fmt.Errorf("%w (no server accepts connections at %s)", err, strings.Join(c.addrs, ", "))
			}
		} else {
			refused = 0
			apiErr := decodeError(resp)
			resp.Body.Close()
			cancel()
			explainAnswer(apiErr, c.addrs[i])
			err = apiErr
			retry = retryable(apiErr, req.idempotent)
			if apiErr.Code == CodeNoQuorum {
				noQuorum++
				retry = true
			}
		}
		if !retry {
			return nil, nil, err
		}
		// Every server of a round answered that it has known no leader
		// for long (or could not be reached): no quorum, no use waiting.
		if (attempt+1)%n == 0 {
			if noQuorum > 0 && noQuorum+roundRefused >= n {
				return nil, nil, &noQuorumError{err}
			}
			noQuorum, roundRefused = 0, 0
		}
		next := retryWaits.Next(wait)
		if time.Now().Add(next).After(giveUp) {
			return nil, nil, fmt.Errorf("gave up after %v: %w", retryFor, err)
		}
		// A next server not yet tried this round is tried at once (the
		// leader died: its followers answer); a full round of failures waits.
		if (attempt+1)%n != 0 {
			continue
		}
		if !backoff.Sleep(ctx, next) {
			return nil, nil, fmt.Errorf("%s %s: %w", req.method, req.path, ctx.Err())
		}
		wait = next
	}
}

// attempt sends req once to the server at base.
func (c *Client) attempt(ctx context.Context, base string, req request) (*http.Response, context.CancelFunc, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if !req.stream && req.open == nil {
		timeout := c.AttemptTimeout
		if timeout <= 0 {
			timeout = DefaultAttemptTimeout
		}
		actx, cancel = context.WithTimeout(ctx, timeout+req.wait)
	}
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	if req.open != nil {
		rc, err := req.open()
		if err != nil {
			return nil, cancel, err
		}
		defer rc.Close()
		body = rc
	}
	hreq, err := http.NewRequestWithContext(actx, req.method, base+c.namespaced(req.path), body)
	if err != nil {
		return nil, cancel, err
	}
	if req.contentType != "" {
		hreq.Header.Set("Content-Type", req.contentType)
	}
	for k, v := range req.header {
		hreq.Header[k] = v
	}
	c.authenticate(hreq)
	resp, err := c.HTTP.Do(hreq)
	return resp, cancel, err
}

// retryable reports whether an error answer may be retried elsewhere.
func retryable(e *Error, idempotent bool) bool {
	switch {
	case e.StatusCode == http.StatusServiceUnavailable && (e.Code == "not-leader" || e.Code == "not-ready"):
		return true // the server guarantees it did nothing
	case e.StatusCode == http.StatusBadGateway && e.Code == "forward-failed":
		return idempotent
	}
	return false
}

// notSent reports whether a transport error happened before the request
// left this process: the server cannot have acted on it.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// untrusted reports whether err is a TLS verification failure.
func untrusted(err error) bool {
	var unknown x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	return errors.Is(err, ErrWrongRole) || errors.As(err, &unknown) || errors.As(err, &verify) || errors.As(err, &invalid) || errors.As(err, &hostname)
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

func queryMeta(resp *http.Response) QueryMeta {
	var m QueryMeta
	if v := resp.Header.Get("X-Strata-Index"); v != "" {
		m.Index, _ = strconv.ParseUint(v, 10, 64)
	}
	m.KnownLeader = resp.Header.Get("X-Strata-Known-Leader") == "true"
	if v, err := strconv.ParseInt(resp.Header.Get("X-Strata-Last-Contact"), 10, 64); err == nil && v > 0 {
		m.LastContact = time.Duration(v) * time.Millisecond
	}
	if resp.Request != nil && resp.Request.URL != nil {
		m.Server = resp.Request.URL.Scheme + "://" + resp.Request.URL.Host
	}
	m.CellID = resp.Header.Get(CellHeader)
	if v := resp.Header.Get(AppliedIndexHeader); v != "" {
		m.AppliedIndex, _ = strconv.ParseUint(v, 10, 64)
	}
	return m
}

func decodeError(resp *http.Response) *Error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var er ErrorResponse
	if json.Unmarshal(b, &er) == nil && er.Error != "" {
		return &Error{StatusCode: resp.StatusCode, Code: er.Code, Message: er.Error, Fields: er.Fields}
	}
	return &Error{StatusCode: resp.StatusCode, Message: fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(b)))}
}

// authenticate adds the client's credentials to a request.
func (c *Client) authenticate(r *http.Request) {
	if c.Token != "" {
		r.Header.Set(HeaderToken, c.Token)
	}
	if n := c.Node; n != nil {
		r.Header.Set(HeaderNodeID, n.ID)
		r.Header.Set(HeaderNodeSecret, n.Secret)
		if n.JoinToken != "" && r.URL.Path == "/v1/agent/nodes" {
			r.Header.Set(HeaderJoinToken, n.JoinToken) // only registration needs it
		}
	}
}

// namespaced adds the client's namespace to path's query (not to the
// agents' endpoints, which are the node's, nor to a path that names one).
func (c *Client) namespaced(path string) string {
	if c.Namespace == "" || strings.HasPrefix(path, "/v1/agent/") || strings.Contains(path, QueryNamespace+"=") {
		return path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + QueryNamespace + "=" + url.QueryEscape(c.Namespace)
}
