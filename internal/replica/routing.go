package replica

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/backoff"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/serverport"
)

// Where a request is served, once it passed the readiness gate:
//
//   - A read with ?stale is served here, from this server's state, with
//     headers saying which leader it knows and when it last heard from it.
//   - On the leader, everything is served here. A read first has the
//     leader confirm its leadership with a quorum (raft's VerifyLeader): a
//     deposed leader that has not noticed yet cannot answer from an old
//     state. A blocking read that loses leadership while it waits ends with
//     503 not-leader, and the client asks again elsewhere.
//   - On a follower, everything else is forwarded to the leader over the
//     server port and its answer relayed as it streams (blocking queries
//     and followed logs included). A forwarded request is never forwarded
//     again.
//   - While there is no ready leader (an election, a new leader's barrier),
//     a request waits for one, up to leaderHold, instead of being answered
//     503 at once: the client gets its answer as soon as the cell can give
//     it, rather than polling through the election.
//   - A Local route (status, metrics) is served here at once.
//
// Writes need no verification: raft commits them only through a leader.
//
// Every decision about who calls holds whichever server receives the
// request (issue 18, defect 1: a follower forwarded an agent's call that
// had no certificate, the leader took the hop's word that the follower
// had checked one, and a rogue node registered through a follower and
// read another tenant's secrets). A forwarded request carries the
// client's own credentials (token, node secret) in its headers, and the
// leader checks them as if the client had called it. What the follower's
// listener verified — the client's certificate chain — rides in
// clientCertHeader, which the follower always sets afresh (a client's own
// is dropped), and which the leader believes only on a request that came
// over the server port's mutual TLS from a server's certificate
// (ClientChain); the API checks the chain again before using it. There is
// no "forwarded, so checked" flag: a forwarded agent call without a
// certificate is refused by the leader as it is at the leader's door.

// Headers of the routing layer.
const (
	// forwardedHeader marks a request a follower forwarded (its value is the
	// follower's id).
	forwardedHeader = "X-Strata-Forwarded-By"
	// clientCertHeader carries, on a forwarded request, the certificate
	// chain the client presented to the follower's listener: each
	// certificate's DER in standard base64, leaf first, comma-separated.
	clientCertHeader  = "X-Strata-Client-Certificate"
	knownLeaderHeader = "X-Strata-Known-Leader"
	leaderHeader      = "X-Strata-Leader"
	// lastContactHeader is how long ago, in milliseconds, this server last
	// heard from the leader: 0 on the leader, -1 if it never did.
	lastContactHeader = "X-Strata-Last-Contact"
)

// isStale reports whether a read allows a possibly stale answer (?stale or
// ?stale=true).
func isStale(r *http.Request) bool {
	if !route.IsRead(r) {
		return false
	}
	v, ok := r.URL.Query()["stale"]
	return ok && (len(v) == 0 || v[0] == "" || v[0] == "true" || v[0] == "1")
}

// Gate serves rt's requests where they belong (see the top of this
// file): Local routes at once, others once this server is ready, by the
// leader, or from here with ?stale.
func (r *Replica) Gate(rt route.Route, next http.Handler) http.Handler {
	if rt.Local {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if err := r.ready.local(); err != nil {
			route.Fail(w, err, r.logger)
			return
		}
		if isStale(req) {
			r.setLeaderHeaders(w)
			next.ServeHTTP(w, req)
			return
		}
		r.route(w, req, rt, next)
	})
}

// leaderHold is how long a request waits for a leader (an election, a new
// leader's barrier) before it is answered 503: the client then need not
// poll through the election, and gets its answer as soon as there is one.
const leaderHold = 5 * time.Second

// route serves a request as the leader or forwards it to the leader,
// holding it while the cell has no ready leader, for up to leaderHold. A
// request whose forward could not reach the leader at all (it just died;
// this server has not noticed yet) waits for the next leader too, when its
// body can be sent again.
func (r *Replica) route(w http.ResponseWriter, req *http.Request, rt route.Route, next http.Handler) {
	deadline := time.Now().Add(leaderHold)
	replay, err := replayableBody(req)
	if err != nil {
		route.Fail(w, err, r.logger)
		return
	}
	var deadLeader raft.ServerAddress
	for {
		var err error
		if replay != nil {
			req.Body = io.NopCloser(bytes.NewReader(replay))
		}
		if r.IsLeader() {
			if err = r.ready.leader(); err == nil {
				r.serveAsLeader(w, req, next)
				return
			}
		} else if addr, _ := r.raft.raft.LeaderWithID(); addr != "" && addr != deadLeader {
			last := replay == nil || time.Now().After(deadline)
			if err = r.forward(w, req, rt, addr, last); err == nil {
				return
			}
			deadLeader = addr
		} else {
			err = fmt.Errorf("%w: no leader elected yet", ErrNotLeader)
		}
		if time.Now().After(deadline) || !backoff.Sleep(req.Context(), 10*time.Millisecond) {
			if errors.Is(err, ErrNotLeader) {
				err = r.noQuorum(err)
			}
			route.Fail(w, err, r.logger)
			return
		}
	}
}

func (r *Replica) serveAsLeader(w http.ResponseWriter, req *http.Request, next http.Handler) {
	term := r.leadership.termContext()
	if term == nil || term.Err() != nil {
		route.Fail(w, ErrNotLeader, r.logger)
		return
	}
	if route.IsRead(req) {
		if err := r.ConfirmLeadership(); err != nil {
			route.Fail(w, err, r.logger)
			return
		}
		r.setLeaderHeaders(w)
		// A read (a blocking one above all) ends when leadership does.
		ctx, cancel := context.WithCancelCause(req.Context())
		stop := context.AfterFunc(term, func() { cancel(ErrNotLeader) })
		defer stop()
		defer cancel(nil)
		req = req.WithContext(ctx)
	}
	next.ServeHTTP(w, req)
}

// ConfirmLeadership has the leader confirm with a quorum that it still
// leads (raft's VerifyLeader), for a write handler that answers from this
// server's state without proposing (a 404): the answer is then as fresh as
// a consistent read's.
func (r *Replica) ConfirmLeadership() error {
	if err := r.raft.wait(r.raft.raft.VerifyLeader()); err != nil {
		return ErrNotLeader
	}
	return nil
}

// noQuorumAfter is how long a server must have known no leader before it
// says the cell has no quorum, at raft multiplier 1 (Config.NoQuorumAfter):
// an election takes a second or two, so this is many failed elections.
const noQuorumAfter = 15 * time.Second

// noQuorum turns err into ErrNoQuorum, saying for how long and how many
// voters the cell has, when this server has known no leader for longer
// than noQuorumAfter (since its last contact with one, or since it started).
func (r *Replica) noQuorum(err error) error {
	if _, id := r.raft.raft.LeaderWithID(); id != "" {
		return err
	}
	since := r.started
	if last := r.raft.raft.LastContact(); last.After(since) {
		since = last
	}
	leaderless, patience := time.Since(since), r.cfg.NoQuorumAfter
	if patience <= 0 {
		patience = noQuorumAfter * time.Duration(max(r.cfg.Multiplier, 1))
	}
	if leaderless < patience {
		return err
	}
	voters := 0
	if f := r.raft.raft.GetConfiguration(); f.Error() == nil {
		for _, srv := range f.Configuration().Servers {
			if srv.Suffrage == raft.Voter {
				voters++
			}
		}
	}
	return fmt.Errorf("no leader for %s: %w, which takes %d of its %d voting servers (strata operator raft peers --stale lists them)",
		leaderless.Round(time.Second), ErrNoQuorum, voters/2+1, voters)
}

func (r *Replica) setLeaderHeaders(w http.ResponseWriter) {
	_, id := r.raft.raft.LeaderWithID()
	w.Header().Set(knownLeaderHeader, strconv.FormatBool(id != ""))
	if id != "" {
		w.Header().Set(leaderHeader, string(id))
	}
	contact := int64(0)
	if !r.IsLeader() {
		if last := r.raft.raft.LastContact(); last.IsZero() {
			contact = -1
		} else {
			contact = time.Since(last).Milliseconds()
		}
	}
	w.Header().Set(lastContactHeader, strconv.FormatInt(contact, 10))
}

// dialError marks a failure to reach the leader at all: the request was
// not sent, so a client may retry it whatever it was.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// newPeerHTTP returns the client a server uses for the other servers'
// ports: formation calls and forwarded requests. It has no overall
// timeout: a forwarded blocking query lasts as long as its wait.
func newPeerHTTP(port *serverport.Port) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			conn, err := port.Dial(ctx, serverport.KindHTTP, addr)
			if err != nil {
				return nil, &dialError{err}
			}
			return conn, nil
		},
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}}
}

// replayableBody reads a request's body so that it can be forwarded again;
// nil for a body too large to hold (a snapshot upload), which is then
// forwarded once.
func replayableBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return []byte{}, nil
	}
	if r.ContentLength < 0 || r.ContentLength > route.MaxBodyBytes {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, route.MaxBodyBytes+1))
	if err != nil {
		return nil, route.BadRequest("read body: %v", err)
	}
	return b, nil
}

// forward relays a request to the leader at addr and its answer back. If
// the leader cannot be reached at all and this is not the last try, it
// writes nothing and returns the error: the request was not sent.
func (r *Replica) forward(w http.ResponseWriter, req *http.Request, rt route.Route, addr raft.ServerAddress, last bool) error {
	if by := req.Header.Get(forwardedHeader); by != "" {
		route.Fail(w, fmt.Errorf("%w (a request forwarded by %s reached a server that no longer leads)", ErrNotLeader, by), r.logger)
		return nil
	}
	if r.peerHTTP == nil {
		route.Fail(w, fmt.Errorf("%w: no leader elected yet", ErrNotLeader), r.logger)
		return nil
	}
	out := r.extendForward(w, req, rt)
	var unreachable error
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: "http", Host: string(addr)})
			pr.SetXForwarded()
			pr.Out.Header.Set(forwardedHeader, r.cfg.ID)
			// What this server's listener verified, and nothing a client
			// sent under that name (see the top of this file).
			pr.Out.Header.Del(clientCertHeader)
			if pr.In.TLS != nil && len(pr.In.TLS.PeerCertificates) > 0 {
				pr.Out.Header.Set(clientCertHeader, encodeChain(pr.In.TLS.PeerCertificates))
			}
		},
		Transport:     r.peerHTTP.Transport,
		FlushInterval: -1, // stream: followed logs, long blocking answers
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			if req.Context().Err() != nil {
				return // the client went away
			}
			var de *dialError
			// EPIPE: the leader closed a kept-alive connection while the
			// request was still being written (it was stopping), so it never
			// read a whole request and applied nothing: unreachable, like a
			// refused dial. A reset or EOF while reading the answer is not
			// (the write may have been applied).
			if errors.As(err, &de) || errors.Is(err, syscall.EPIPE) {
				unreachable = fmt.Errorf("%w: the leader at %s is unreachable: %v", ErrNotLeader, addr, err)
				if last {
					route.Fail(w, unreachable, r.logger)
				}
				return
			}
			r.logger.Warn("forward to leader failed", "leader", addr, "method", req.Method, "path", req.URL.Path, "err", err)
			route.WriteError(w, &route.Error{Status: http.StatusBadGateway, Code: "forward-failed",
				Msg: fmt.Sprintf("the leader at %s did not answer (%v); a write may or may not have been applied", addr, err)})
		},
	}
	proxy.ServeHTTP(out, req)
	if last {
		return nil
	}
	return unreachable
}

// extendForward gives a forwarded request the time the leader will give it
// (the API's timeouts would cut it short here first): an upload its
// transfer, a blocking query its wait; and it returns the writer to relay
// the answer through: a stream (a followed log, a snapshot download) keeps
// its write deadline one write timeout ahead of each write.
func (r *Replica) extendForward(w http.ResponseWriter, req *http.Request, rt route.Route) http.ResponseWriter {
	switch {
	case rt.Upload > 0:
		httplimit.Extend(w, rt.Upload)
	case rt.Stream != nil && rt.Stream(req):
		return httplimit.Stream(w, r.cfg.HTTP.WithDefaults().WriteTimeout)
	case route.IsRead(req):
		if _, wait, err := route.BlockingParams(req); err == nil && wait > 0 {
			r.cfg.HTTP.ExtendBy(w, wait)
		}
	}
	return w
}

type serverPortKey struct{}

// viaServerPort marks the requests that came over the server port: only
// other servers reach it (mutual TLS with a server certificate).
func viaServerPort(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), serverPortKey{}, true)))
	})
}

// ForwardedByServer reports whether r is a request a follower forwarded
// over the server port; the forwarding header alone, which any client can
// set on the API port, proves nothing.
func ForwardedByServer(r *http.Request) bool {
	via, _ := r.Context().Value(serverPortKey{}).(bool)
	return via && r.Header.Get(forwardedHeader) != ""
}

// ClientChain is the certificate chain r's client presented, leaf first,
// and whether a follower carried it (its receiver then verifies it again:
// internal/httpapi does). A request received from its client: the chain
// of its own connection, which the listener verified. A request a
// follower forwarded: the chain the follower's listener verified, believed
// only when it came over the server port's mutual TLS from a server's
// certificate; over a plaintext server port (a cell without TLS) nobody
// can vouch for it, and it is nil. Nil: no certificate.
func ClientChain(r *http.Request) (chain []*x509.Certificate, forwarded bool) {
	via, _ := r.Context().Value(serverPortKey{}).(bool)
	if !via {
		if r.TLS == nil {
			return nil, false
		}
		return r.TLS.PeerCertificates, false
	}
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 ||
		!slices.Contains(r.TLS.PeerCertificates[0].Subject.OrganizationalUnit, api.TLSRoleServer) {
		return nil, true
	}
	chain, err := decodeChain(r.Header.Get(clientCertHeader))
	if err != nil {
		return nil, true
	}
	return chain, true
}

// encodeChain and decodeChain are clientCertHeader's form.
func encodeChain(chain []*x509.Certificate) string {
	parts := make([]string, len(chain))
	for i, c := range chain {
		parts[i] = base64.StdEncoding.EncodeToString(c.Raw)
	}
	return strings.Join(parts, ",")
}

func decodeChain(v string) ([]*x509.Certificate, error) {
	if v == "" {
		return nil, nil
	}
	var chain []*x509.Certificate
	for _, part := range strings.Split(v, ",") {
		der, err := base64.StdEncoding.DecodeString(part)
		if err != nil {
			return nil, err
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, err
		}
		chain = append(chain, c)
	}
	return chain, nil
}
