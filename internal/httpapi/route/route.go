package route

import (
	"net/http"
	"time"

	"github.com/strata-dev/strata/api"
)

// Handler serves a request; the error it returns is the answer (Fail),
// unless it wrote one itself. A handler that wrote a response returns nil.
type Handler func(w http.ResponseWriter, r *http.Request) error

// Route is one entry of the API's table.
type Route struct {
	// Pattern is the http.ServeMux pattern: "METHOD /path/{param}".
	Pattern string
	// Rule is what a caller needs while ACLs are on (no default: a route
	// without one is refused when the table is built).
	Rule Rule
	// Local routes are served by the server that receives them, at once:
	// before its state is replayed and without a leader (status, metrics).
	// Others wait for readiness and are served by the leader (or, with
	// ?stale, from this server's state).
	Local bool
	// Audit says which of the route's writes the audit log records.
	Audit Audit
	// NamespaceParam names the path parameter that is the namespace the
	// ACL checks (a namespace's own page); "": the request's ?namespace=.
	NamespaceParam string
	// NodeParam names the path parameter that is the node a ByNode call
	// is for; "": the node the request's node header names.
	NodeParam string
	// Stream, when set, says whether a request's answer streams for as
	// long as the client reads (a followed log, a snapshot download):
	// a forwarded one keeps its write deadline ahead of each write.
	Stream func(r *http.Request) bool
	// Upload is how long the request's body may take to arrive (a
	// snapshot file); 0: the API's read timeout.
	Upload time.Duration
	// Scrape lets a metrics scraper's certificate call the route where
	// certificates authenticate callers (TLS without ACLs): /metrics.
	Scrape bool
	// Handle serves it.
	Handle Handler
}

// Scope is what kind of permission a route needs.
type Scope int

const (
	scopeNone Scope = iota // no rule given: refused when the table is built
	// ScopeNamespace: a capability in the request's namespace.
	ScopeNamespace
	// ScopeCell: a capability on the cell.
	ScopeCell
	// ScopeNode: the node's own credentials (node id and secret, and the
	// agent's certificate with TLS); the node id is the path's {id} when
	// the route has one, else the request's node header. The wrapper
	// checks them before the handler runs, whether ACLs are on or not.
	ScopeNode
	// ScopeNodeJoin: a node registering, with the join token or its own
	// secret: its handler checks them against the body it registers.
	ScopeNodeJoin
	// ScopeToken: any valid token.
	ScopeToken
	// ScopeOpen: nothing.
	ScopeOpen
)

// Rule is what a request needs: a scope and, for the namespace and cell
// scopes, a capability.
type Rule struct {
	Scope Scope
	Cap   string
}

// The rules routes use.
var (
	NamespaceRead   = Rule{ScopeNamespace, api.CapRead}
	NamespaceSubmit = Rule{ScopeNamespace, api.CapSubmit}
	NamespaceLogs   = Rule{ScopeNamespace, api.CapLogs}
	CellRead        = Rule{ScopeCell, api.CapRead}
	CellManage      = Rule{ScopeCell, api.CapCellManage}
	ACLAdmin        = Rule{ScopeCell, api.CapACLAdmin}
	ByNode          = Rule{Scope: ScopeNode}
	NodeJoin        = Rule{Scope: ScopeNodeJoin}
	AnyToken        = Rule{Scope: ScopeToken}
	Open            = Rule{Scope: ScopeOpen}
)

// Given reports whether the rule was set.
func (r Rule) Given() bool { return r.Scope != scopeNone }

// Audit says which writes of a route the audit log records (reads never).
type Audit int

const (
	// AuditWrites records every write, allowed or refused.
	AuditWrites Audit = iota
	// AuditRefusals records only refused writes (agents' routine reports,
	// which would drown the rest).
	AuditRefusals
	// AuditNever records nothing (heartbeats).
	AuditNever
)

// Group is a room's routes, mounted together.
type Group []Route

// IsRead reports whether a request only reads.
func IsRead(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }
