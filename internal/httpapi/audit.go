package httpapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/replica"
	"github.com/strata-dev/strata/internal/state"
)

// The audit log (docs/security.md): every write to the API — allowed or
// refused, by a token, a node or nobody — becomes an entry that says who,
// what, when, from where and with what result. Entries are replicated
// through raft (fsm.AppendAudit) and the store keeps the newest
// state.MaxAudit of them.
//
// Writes are served by the leader only (followers forward them), so the
// leader records them: a handler's answer is queued, and the leader's
// "audit" loop (Flush) commits the queue in batches every auditFlush (one
// raft entry for many requests). What a route's writes leave in the log
// is its route.Audit: the agents' heartbeats nothing, their status
// reports only when refused. A queue that overflows, or entries queued
// when leadership is lost, are dropped and counted in the server's log.
// Refusals of callers who proved no identity are aggregated and bounded
// apart (audit_refusals.go).

const (
	auditFlush   = 100 * time.Millisecond
	auditQueue   = 8192
	auditBatch   = 512
	forwardedFor = "X-Forwarded-For"
)

// AuditLog queues the API's audit entries for the leader to commit.
type AuditLog struct {
	proposer *fsm.Proposer
	logger   *slog.Logger
	queue    chan *api.AuditEntry
	dropped  atomic.Int64 // entries the full queue refused
	// unproven aggregates refusals of callers who proved no identity
	// (audit_refusals.go): they never take a place in queue.
	unproven refusals
}

// NewAuditLog is an audit log committed through p.
func NewAuditLog(p *fsm.Proposer, logger *slog.Logger) *AuditLog {
	return &AuditLog{proposer: p, logger: logger, queue: make(chan *api.AuditEntry, auditQueue)}
}

// audited serves r through next and queues its audit entry when rt's
// Audit says so.
func (s *API) audited(w http.ResponseWriter, r *http.Request, rt route.Route, next http.HandlerFunc) {
	if route.IsRead(r) || rt.Audit == route.AuditNever {
		next(w, r)
		return
	}
	rec := &route.Recorder{ResponseWriter: w}
	next(rec, r)
	status := rec.Answered()
	if rt.Audit == route.AuditRefusals && status < 300 {
		return
	}
	c := callerOf(r.Context())
	e := &api.AuditEntry{Time: s.cfg.Now().UTC(), Accessor: c.Accessor, TokenName: c.Name, Node: c.Node,
		Method: r.Method, Path: r.URL.Path, From: clientAddr(r), Status: status, Result: "ok"}
	switch {
	case c.Accessor != "":
		e.Who = "token " + c.Accessor + " (" + c.Name + ")"
	case c.Node != "":
		e.Who = "node " + c.Node
	case c.CertRole != "":
		e.Who = "certificate " + c.CertName + " (" + string(c.CertRole) + ")"
	default:
		e.Who = "anonymous"
		if id := r.Header.Get(api.HeaderNodeID); id != "" {
			e.Who += " (claims node " + id + ")"
		}
	}
	if status >= 300 {
		e.Result = rec.Header().Get(route.ErrorCodeHeader)
		if e.Result == "" {
			e.Result = http.StatusText(status)
		}
		if !c.proven() {
			s.audit.unproven.add(e)
			return
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
	if replica.ForwardedByServer(r) {
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

// Flush commits queued entries in batches until ctx ends: the leader's
// "audit" loop.
func (l *AuditLog) Flush(ctx context.Context) {
	tick := time.NewTicker(auditFlush)
	defer tick.Stop()
	window := time.NewTicker(refusalWindow)
	defer window.Stop()
	var batch []*api.AuditEntry
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if _, _, err := l.proposer.Propose(&fsm.AppendAudit{Entries: batch}); err != nil {
			l.logger.Warn("audit entries lost", "entries", len(batch), "err", err)
		}
		batch = nil
		if n := l.dropped.Swap(0); n > 0 {
			l.logger.Warn("audit queue overflowed; entries dropped", "dropped", n)
		}
	}
	for {
		select {
		case <-ctx.Done():
			batch = append(batch, l.unproven.take()...)
			flush()
			return
		case <-window.C:
			batch = append(batch, l.unproven.take()...)
			flush()
		case e := <-l.queue:
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
func (s *API) handleAudit(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var since time.Time
	if v := q.Get("since"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			since = s.cfg.Now().Add(-d)
		} else if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			since = t
		} else {
			return route.Invalid("invalid-parameter", []api.FieldError{{Path: "since", Message: "want an RFC 3339 time or a duration such as 1h, got " + v}})
		}
	}
	who := q.Get("who")
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		out := []*api.AuditEntry{}
		for _, e := range snap.Audit(ws) {
			if last := e.Time; last.Before(since) && (e.Until.IsZero() || e.Until.Before(since)) {
				continue
			}
			if who != "" && e.Accessor != who && e.TokenName != who && e.Node != who {
				continue
			}
			out = append(out, e)
		}
		// In the order the requests came: aggregated refusals are
		// committed at the end of their window, under their first time.
		slices.SortStableFunc(out, func(a, b *api.AuditEntry) int { return a.Time.Compare(b.Time) })
		return out, snap.TableIndex(ws, state.TableAudit), nil
	})
}
