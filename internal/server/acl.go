package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// ACLs (docs/security.md). With Config.ACL on, every request to the API
// is authorized before its handler runs:
//
//   - routeRules says, for every route pattern, what the request needs: a
//     capability in the request's namespace, a capability on the cell, a
//     node's own credentials (the agents' endpoints, checked by their
//     handlers), any valid token (a token reading itself), or nothing (the
//     status endpoints load balancers poll, and the one-time bootstrap).
//   - A route without a rule is refused: a new endpoint is closed until it
//     is given one (TestEveryRouteHasAnACLRule).
//   - The token comes in X-Strata-Token (or Authorization: Bearer). A
//     missing, malformed, unknown, revoked or expired token, and one whose
//     policies lack the capability, each get a 403 with its own code and a
//     message that names what was wrong. Nothing is changed.
//
// With ACLs off every request is allowed, as before ACLs existed.

// scope is what kind of permission a route needs.
type scope int

const (
	scopeNamespace scope = iota // capability in the request's namespace
	scopeCell                   // capability on the cell
	scopeNode                   // a node's own credentials (handler checks)
	scopeToken                  // any valid token
	scopeOpen                   // nothing
)

type aclRule struct {
	scope scope
	cap   string
}

var (
	nsRead   = aclRule{scopeNamespace, api.CapRead}
	nsSubmit = aclRule{scopeNamespace, api.CapSubmit}
	nsLogs   = aclRule{scopeNamespace, api.CapLogs}
	cellRead = aclRule{scopeCell, api.CapRead}
	cellMgmt = aclRule{scopeCell, api.CapCellManage}
	aclAdmin = aclRule{scopeCell, api.CapACLAdmin}
	byNode   = aclRule{scope: scopeNode}
	anyToken = aclRule{scope: scopeToken}
	open     = aclRule{scope: scopeOpen}
)

// routeRules holds the rule of every route pattern of routes().
var routeRules = map[string]aclRule{
	"POST /v1/workloads":                   nsSubmit,
	"PUT /v1/workloads":                    nsSubmit,
	"GET /v1/workloads":                    nsRead,
	"GET /v1/workloads/{name}":             nsRead,
	"DELETE /v1/workloads/{name}":          nsSubmit,
	"GET /v1/workloads/{name}/allocations": nsRead,
	"GET /v1/workloads/{name}/evaluations": nsRead,
	"GET /v1/allocations":                  nsRead,
	"GET /v1/allocations/{id}":             nsRead,
	"GET /v1/allocations/{id}/logs":        nsLogs,
	"POST /v1/allocations/{id}/migrate":    nsSubmit,
	"GET /v1/evaluations":                  nsRead,
	"GET /v1/evaluations/{id}":             nsRead,
	"GET /v1/events":                       nsRead,
	"GET /v1/services":                     nsRead,
	"GET /v1/services/{name}":              nsRead,

	// Namespaces: reading one's own (its quota and usage) is a read in
	// it; listing them all, creating, changing and deleting are the
	// cell's (docs/tenants.md). The namespace is the path's, so
	// namespaceRoutes name it for the ACL check.
	"GET /v1/namespaces":           cellRead,
	"GET /v1/namespaces/{name}":    nsRead,
	"PUT /v1/namespaces":           cellMgmt,
	"DELETE /v1/namespaces/{name}": cellMgmt,

	"GET /v1/nodes":                       cellRead,
	"GET /v1/nodes/{id}":                  cellRead,
	"GET /v1/nodes/{id}/status":           cellRead,
	"POST /v1/nodes/{id}/eligibility":     cellMgmt,
	"POST /v1/nodes/{id}/drain":           cellMgmt,
	"POST /v1/nodes/{id}/quarantine":      cellMgmt,
	"POST /v1/nodes/{id}/purge":           cellMgmt,
	"GET /v1/cell/config":                 cellRead,
	"PUT /v1/cell/config":                 cellMgmt,
	"GET /v1/operator/raft/configuration": cellRead,
	"DELETE /v1/operator/raft/peer":       cellMgmt,
	"GET /v1/operator/snapshot":           cellMgmt,
	"PUT /v1/operator/snapshot":           cellMgmt,

	// Served ahead of the readiness gate (metrics.go): a scrape sends its
	// token as "Authorization: Bearer", as Prometheus does.
	metricsRoute:            cellRead,
	"GET /v1/status/leader": open,
	"GET /v1/status/ready":  open,
	"GET /v1/status/raft":   open,
	"/":                     open, // the 404 of unknown paths
	"":                      open, // the mux's own 404 and 405 answers

	"POST /v1/agent/nodes":                 byNode,
	"PUT /v1/agent/nodes/{id}/heartbeat":   byNode,
	"GET /v1/agent/nodes/{id}/allocations": byNode,
	"POST /v1/agent/allocations":           byNode,
	// A migration's agents: the handlers check that the node is the
	// migration's source or target (migrate.go).
	"POST /v1/agent/allocations/{id}/migration": byNode,
	"GET /v1/agent/nodes/{id}/incoming/{alloc}": byNode,
	"GET /v1/audit":                    aclAdmin,
	"POST /v1/acl/bootstrap":           open, // once per cell
	"GET /v1/acl/token/self":           anyToken,
	"GET /v1/acl/policies":             aclAdmin,
	"GET /v1/acl/policies/{name}":      aclAdmin,
	"PUT /v1/acl/policies":             aclAdmin,
	"DELETE /v1/acl/policies/{name}":   aclAdmin,
	"GET /v1/acl/tokens":               aclAdmin,
	"GET /v1/acl/tokens/{accessor}":    aclAdmin,
	"POST /v1/acl/tokens":              aclAdmin,
	"DELETE /v1/acl/tokens/{accessor}": aclAdmin,
}

// aclTokenHash is what the cell stores for a token's secret.
func aclTokenHash(secret string) string {
	h := sha256.Sum256([]byte("strata acl token\x00" + secret))
	return hex.EncodeToString(h[:])
}

// wellFormedSecret reports whether s looks like a token secret: 64
// lower-case hex digits (nodeauth.NewSecret).
func wellFormedSecret(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// caller is who made a request, as far as the server knows: a token, a
// node, or nobody. It rides in the request's context.
type caller struct {
	Accessor string // token accessor id
	Name     string // token name
	Node     string // an agent's node id, set by the agents' handlers
}

type callerKey struct{}

func callerOf(ctx context.Context) *caller {
	c, _ := ctx.Value(callerKey{}).(*caller)
	if c == nil {
		return &caller{}
	}
	return c
}

// requestToken is the token secret a request carries, "" for none.
func requestToken(r *http.Request) string {
	if t := r.Header.Get(api.HeaderToken); t != "" {
		return strings.TrimSpace(t)
	}
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

func aclError(code, format string, args ...any) error {
	return &httpError{status: http.StatusForbidden, code: code, msg: fmt.Sprintf(format, args...)}
}

// resolveToken finds the token a request carries and says what is wrong
// with it (nil error: a usable token, or none when there is none).
func resolveToken(snap *state.Snapshot, secret string, now time.Time) (*state.ACLToken, error) {
	if secret == "" {
		return nil, nil
	}
	if !wellFormedSecret(secret) {
		return nil, aclError("acl-token-malformed", "the token is malformed: a Strata token secret is 64 hexadecimal digits, got %d characters", len(secret))
	}
	t := snap.ACLTokenBySecretHash(aclTokenHash(secret))
	switch {
	case t == nil:
		return nil, aclError("acl-token-unknown", "the token is unknown to this cell: never issued here, or the cell's state was replaced")
	case t.Revoked:
		return nil, aclError("acl-token-revoked", "token %s (%s) was revoked at %s", t.AccessorID, t.Name, t.RevokeTime.UTC().Format(time.RFC3339))
	case t.ExpiresAt != nil && !now.Before(*t.ExpiresAt):
		return nil, aclError("acl-token-expired", "token %s (%s) expired at %s", t.AccessorID, t.Name, t.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return t, nil
}

// allows reports whether token t holds capability cp, in namespace ns for
// a namespace rule, or on the cell.
func allows(snap *state.Snapshot, t *state.ACLToken, rule aclRule, ns string) bool {
	if t.Management {
		return true
	}
	for _, name := range t.Policies {
		p := snap.ACLPolicy(name)
		if p == nil {
			continue // deleted: grants nothing
		}
		if rule.scope == scopeCell {
			if slices.Contains(p.Cell, rule.cap) {
				return true
			}
			continue
		}
		if slices.Contains(p.Namespaces[ns], rule.cap) || slices.Contains(p.Namespaces["*"], rule.cap) {
			return true
		}
	}
	return false
}

// authorize applies routeRules before mux's handlers, and audits writes.
func (s *Server) authorize(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		c := &caller{}
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
		s.audited(w, r, pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.authorizeAndServe(w, r, mux, pattern, c)
		}))
	})
}

// authorizeAndServe serves r with mux when routeRules[pattern] lets its
// caller, and fails it with a 403 naming what is missing otherwise.
func (s *Server) authorizeAndServe(w http.ResponseWriter, r *http.Request, mux http.Handler, pattern string, c *caller) {
	snap := s.State().Snapshot()
	tok, err := resolveToken(snap, requestToken(r), s.cfg.Now())
	if tok != nil {
		c.Accessor, c.Name = tok.AccessorID, tok.Name
	}
	if !s.cfg.ACL {
		mux.ServeHTTP(w, r)
		return
	}
	rule, known := routeRules[pattern]
	switch {
	case !known:
		s.fail(w, aclError("acl-denied", "%s %s has no ACL rule; it is closed while ACLs are on", r.Method, r.URL.Path))
		return
	case rule.scope == scopeOpen || rule.scope == scopeNode:
		mux.ServeHTTP(w, r)
		return
	case err != nil:
		s.fail(w, err)
		return
	case tok == nil:
		s.fail(w, aclError("acl-no-token", "ACLs are on: %s %s needs a token (STRATA_TOKEN or --token) with %s", r.Method, r.URL.Path, describe(rule, aclNamespace(r, pattern))))
		return
	case rule.scope == scopeToken:
		mux.ServeHTTP(w, r)
		return
	}
	ns := aclNamespace(r, pattern)
	if !allows(snap, tok, rule, ns) {
		s.fail(w, aclError("acl-denied", "token %s (%s) lacks %s (policies: %s)", tok.AccessorID, tok.Name, describe(rule, ns), policyList(tok)))
		return
	}
	mux.ServeHTTP(w, r)
}

func describe(rule aclRule, ns string) string {
	if rule.scope == scopeCell {
		return fmt.Sprintf("capability %q on the cell", rule.cap)
	}
	return fmt.Sprintf("capability %q in namespace %q", rule.cap, ns)
}

func policyList(t *state.ACLToken) string {
	if len(t.Policies) == 0 {
		return "none"
	}
	return strings.Join(t.Policies, ", ")
}
