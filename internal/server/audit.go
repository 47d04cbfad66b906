package server

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/state"
)

// The audit log (docs/security.md): every write to the API — allowed or
// refused, by a token, a node or nobody — becomes an entry that says who,
// what, when, from where and with what result. Entries are replicated
// through raft (cmdAppendAudit) and the store keeps the newest
// state.MaxAudit of them.
//
// Writes are served by the leader only (followers forward them), so the
// leader records them: a handler's answer is queued, and the auditor
// commits the queue in batches every auditFlush (one raft entry for many
// requests). Not audited, because they are the agents' routine and would
// drown the rest: heartbeats, and status reports the server accepted; a
// refused one is audited. A queue that overflows, or entries queued when
// leadership is lost, are dropped and counted in the server's log.

const (
	auditFlush     = 100 * time.Millisecond
	auditQueue     = 8192
	auditBatch     = 512
	errorCodeHdr   = "X-Strata-Error-Code"
	forwardedFor   = "X-Forwarded-For"
	auditHeartbeat = "PUT /v1/agent/nodes/{id}/heartbeat"
	auditReports   = "POST /v1/agent/allocations"
)

type auditor struct {
	queue   chan *api.AuditEntry
	dropped atomic.Int64 // entries the full queue refused
}

func newAuditor() *auditor { return &auditor{queue: make(chan *api.AuditEntry, auditQueue)} }

// statusRecorder remembers a response's status.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// audited serves r through next and queues its audit entry when it is a
// write.
func (s *Server) audited(w http.ResponseWriter, r *http.Request, pattern string, next http.Handler) {
	if isRead(r) || pattern == auditHeartbeat {
		next.ServeHTTP(w, r)
		return
	}
	rec := &statusRecorder{ResponseWriter: w}
	next.ServeHTTP(rec, r)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if pattern == auditReports && rec.status < 300 {
		return
	}
	c := callerOf(r.Context())
	e := &api.AuditEntry{Time: s.cfg.Now().UTC(), Accessor: c.Accessor, TokenName: c.Name, Node: c.Node,
		Method: r.Method, Path: r.URL.Path, From: clientAddr(r), Status: rec.status, Result: "ok"}
	switch {
	case c.Accessor != "":
		e.Who = "token " + c.Accessor + " (" + c.Name + ")"
	case c.Node != "":
		e.Who = "node " + c.Node
	default:
		e.Who = "anonymous"
		if id := r.Header.Get(api.HeaderNodeID); id != "" {
			e.Who += " (claims node " + id + ")"
		}
	}
	if rec.status >= 300 {
		e.Result = rec.Header().Get(errorCodeHdr)
		if e.Result == "" {
			e.Result = http.StatusText(rec.status)
		}
	}
	select {
	case s.audit.queue <- e:
	default:
		s.audit.dropped.Add(1)
	}
}

// clientAddr is where a request came from: its peer, or for a request a
// follower forwarded, the client the follower names.
func clientAddr(r *http.Request) string {
	if forwardedByServer(r) {
		if xff := r.Header.Get(forwardedFor); xff != "" {
			first, _, _ := strings.Cut(xff, ",")
			return strings.TrimSpace(first)
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// runAuditor commits queued entries in batches until ctx ends.
func (s *Server) runAuditor(ctx context.Context) {
	tick := time.NewTicker(auditFlush)
	defer tick.Stop()
	var batch []*api.AuditEntry
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if _, err := s.propose(&fsm.AppendAudit{Entries: batch}); err != nil {
			s.logger.Warn("audit entries lost", "entries", len(batch), "err", err)
		}
		batch = nil
		if n := s.audit.dropped.Swap(0); n > 0 {
			s.logger.Warn("audit queue overflowed; entries dropped", "dropped", n)
		}
	}
	for {
		select {
		case <-ctx.Done():
			flush()
			return
		case e := <-s.audit.queue:
			batch = append(batch, e)
			if len(batch) >= auditBatch {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}

// handleAudit lists the audit log: ?since (RFC 3339 time, or a duration
// back from now) and ?who (an accessor, a token name or a node id).
func (s *Server) handleAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var since time.Time
	if v := q.Get("since"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			since = s.cfg.Now().Add(-d)
		} else if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			since = t
		} else {
			s.fail(w, invalid("invalid-parameter", []api.FieldError{{Path: "since", Message: "want an RFC 3339 time or a duration such as 1h, got " + v}}))
			return
		}
	}
	who := q.Get("who")
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		out := []*api.AuditEntry{}
		for _, e := range snap.Audit(ws) {
			if e.Time.Before(since) {
				continue
			}
			if who != "" && e.Accessor != who && e.TokenName != who && e.Node != who {
				continue
			}
			out = append(out, e)
		}
		return out, snap.TableIndex(ws, state.TableAudit), nil
	})
}
