package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/raft"

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
//
// Writes need no verification: raft commits them only through a leader.

// Headers of the routing layer.
const (
	// forwardedHeader marks a request a follower forwarded (its value is the
	// follower's id).
	forwardedHeader   = "X-Strata-Forwarded-By"
	knownLeaderHeader = "X-Strata-Known-Leader"
	leaderHeader      = "X-Strata-Leader"
	// lastContactHeader is how long ago, in milliseconds, this server last
	// heard from the leader: 0 on the leader, -1 if it never did.
	lastContactHeader = "X-Strata-Last-Contact"
)

// isRead reports whether a request only reads.
func isRead(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }

// isStale reports whether a read allows a possibly stale answer (?stale or
// ?stale=true).
func isStale(r *http.Request) bool {
	if !isRead(r) {
		return false
	}
	v, ok := r.URL.Query()["stale"]
	return ok && (len(v) == 0 || v[0] == "" || v[0] == "true" || v[0] == "1")
}

// gate applies readiness, then routes (see the top of this file).
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ungated(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		if err := s.ready.local(); err != nil {
			writeNotReady(w, err)
			return
		}
		if isStale(r) {
			s.setLeaderHeaders(w)
			next.ServeHTTP(w, r)
			return
		}
		s.route(w, r, next)
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
func (s *Server) route(w http.ResponseWriter, r *http.Request, next http.Handler) {
	deadline := time.Now().Add(leaderHold)
	replay, err := replayableBody(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	var deadLeader raft.ServerAddress
	for {
		var err error
		if replay != nil {
			r.Body = io.NopCloser(bytes.NewReader(replay))
		}
		if s.IsLeader() {
			if err = s.ready.leader(); err == nil {
				s.serveAsLeader(w, r, next)
				return
			}
		} else if addr, _ := s.raft.raft.LeaderWithID(); addr != "" && addr != deadLeader {
			last := replay == nil || time.Now().After(deadline)
			if err = s.forward(w, r, addr, last); err == nil {
				return
			}
			deadLeader = addr
		} else {
			err = fmt.Errorf("%w: no leader elected yet", ErrNotLeader)
		}
		if time.Now().After(deadline) || !sleepCtx(r.Context(), 10*time.Millisecond) {
			if errors.Is(err, ErrNotLeader) {
				err = s.noQuorum(err)
			}
			s.fail(w, err)
			return
		}
	}
}

// ungated reports whether a path is served before the state is replayed:
// the servers' own status and metrics and their formation calls, which
// read nothing from the state.
func ungated(path string) bool {
	return strings.HasPrefix(path, "/v1/status/") || path == "/metrics" || strings.HasPrefix(path, "/v1/internal/")
}

func (s *Server) serveAsLeader(w http.ResponseWriter, r *http.Request, next http.Handler) {
	term := s.termContext()
	if term == nil || term.Err() != nil {
		s.fail(w, ErrNotLeader)
		return
	}
	if isRead(r) {
		if err := s.confirmLeadership(); err != nil {
			s.fail(w, err)
			return
		}
		s.setLeaderHeaders(w)
		// A read (a blocking one above all) ends when leadership does.
		ctx, cancel := context.WithCancelCause(r.Context())
		stop := context.AfterFunc(term, func() { cancel(ErrNotLeader) })
		defer stop()
		defer cancel(nil)
		r = r.WithContext(ctx)
	}
	next.ServeHTTP(w, r)
}

// confirmLeadership has the leader confirm with a quorum that it still
// leads (raft's VerifyLeader), for a write handler that answers from this
// server's state without proposing (a 404): the answer is then as fresh as
// a consistent read's.
func (s *Server) confirmLeadership() error {
	if err := s.raft.wait(s.raft.raft.VerifyLeader()); err != nil {
		return ErrNotLeader
	}
	return nil
}

// lostLeadership reports whether a request's context ended because this
// server stopped leading (rather than because the client went away).
func lostLeadership(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), ErrNotLeader)
}

// termContext is the context of the current leadership term, nil when not
// leading.
func (s *Server) termContext() context.Context {
	if p := s.term.Load(); p != nil {
		return *p
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
func (s *Server) noQuorum(err error) error {
	if _, id := s.raft.raft.LeaderWithID(); id != "" {
		return err
	}
	since := s.started
	if last := s.raft.raft.LastContact(); last.After(since) {
		since = last
	}
	leaderless, patience := time.Since(since), s.cfg.NoQuorumAfter
	if patience <= 0 {
		patience = noQuorumAfter * time.Duration(max(s.cfg.RaftMultiplier, 1))
	}
	if leaderless < patience {
		return err
	}
	voters := 0
	if f := s.raft.raft.GetConfiguration(); f.Error() == nil {
		for _, srv := range f.Configuration().Servers {
			if srv.Suffrage == raft.Voter {
				voters++
			}
		}
	}
	return fmt.Errorf("no leader for %s: %w, which takes %d of its %d voting servers (strata operator raft peers --stale lists them)",
		leaderless.Round(time.Second), ErrNoQuorum, voters/2+1, voters)
}

func (s *Server) setLeaderHeaders(w http.ResponseWriter) {
	_, id := s.raft.raft.LeaderWithID()
	w.Header().Set(knownLeaderHeader, strconv.FormatBool(id != ""))
	if id != "" {
		w.Header().Set(leaderHeader, string(id))
	}
	contact := int64(0)
	if !s.IsLeader() {
		if last := s.raft.raft.LastContact(); last.IsZero() {
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
	if r.ContentLength < 0 || r.ContentLength > maxBodyBytes {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, badRequest("read body: %v", err)
	}
	return b, nil
}

// forward relays a request to the leader at addr and its answer back. If
// the leader cannot be reached at all and this is not the last try, it
// writes nothing and returns the error: the request was not sent.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, addr raft.ServerAddress, last bool) error {
	if by := r.Header.Get(forwardedHeader); by != "" {
		s.fail(w, fmt.Errorf("%w (a request forwarded by %s reached a server that no longer leads)", ErrNotLeader, by))
		return nil
	}
	if s.peerHTTP == nil {
		s.fail(w, fmt.Errorf("%w: no leader elected yet", ErrNotLeader))
		return nil
	}
	out := s.extendForward(w, r)
	var unreachable error
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: "http", Host: string(addr)})
			pr.SetXForwarded()
			pr.Out.Header.Set(forwardedHeader, s.id)
		},
		Transport:     s.peerHTTP.Transport,
		FlushInterval: -1, // stream: followed logs, long blocking answers
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
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
					s.fail(w, unreachable)
				}
				return
			}
			s.logger.Warn("forward to leader failed", "leader", addr, "method", r.Method, "path", r.URL.Path, "err", err)
			writeError(w, http.StatusBadGateway, "forward-failed",
				fmt.Sprintf("the leader at %s did not answer (%v); a write may or may not have been applied", addr, err))
		},
	}
	proxy.ServeHTTP(out, r)
	if last {
		return nil
	}
	return unreachable
}

// snapshotTransfer bounds the upload or download of a snapshot file.
const snapshotTransfer = time.Hour

// extendForward gives a forwarded request the time the leader will give it
// (the API's timeouts would cut it short here first): a blocking query its
// wait, a snapshot upload its transfer; and it returns the writer to relay
// the answer through: streams (a followed log, a snapshot download) keep
// their write deadline one write timeout ahead of each write.
func (s *Server) extendForward(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPut && r.URL.Path == "/v1/operator/snapshot":
		httplimit.Extend(w, snapshotTransfer)
	case isRead(r) && (strings.HasSuffix(r.URL.Path, "/logs") && q.Get("follow") == "true" || r.URL.Path == "/v1/operator/snapshot"):
		return &streamingResponse{ResponseWriter: w, rc: http.NewResponseController(w), perWrite: s.cfg.HTTP.WithDefaults().WriteTimeout}
	case isRead(r):
		if _, wait, err := blockingParams(r); err == nil && wait > 0 {
			s.cfg.HTTP.ExtendBy(w, wait)
		}
	}
	return w
}

// streamingResponse relays a stream of unbounded length: before each write
// it sets the write deadline perWrite ahead, so a client that keeps reading
// keeps the stream (httplimit.Stream, as an http.ResponseWriter).
type streamingResponse struct {
	http.ResponseWriter
	rc       *http.ResponseController
	perWrite time.Duration
}

func (s *streamingResponse) Write(p []byte) (int, error) {
	if s.perWrite > 0 {
		s.rc.SetWriteDeadline(time.Now().Add(s.perWrite))
	}
	return s.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController (the proxy's flushes) reach the
// connection.
func (s *streamingResponse) Unwrap() http.ResponseWriter { return s.ResponseWriter }
