package httpapi

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
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// ACLs (docs/security.md). With Config.ACL on, every request to the API
// is authorized before its handler runs, by its route's rule
// (route.Rule):
//
//   - a capability in the request's namespace, or on the cell; a node's
//     own credentials (checked whether ACLs are on or not: authenticate,
//     node_identity.go); any valid token (a token reading itself); or
//     nothing (the status endpoints load balancers poll, and the one-time
//     bootstrap).
//   - A route without a rule cannot be built: New refuses it.
//   - The token comes in X-Strata-Token (or Authorization: Bearer). A
//     missing, malformed, unknown, revoked or expired token, and one whose
//     policies lack the capability, each get a 403 with its own code and a
//     message that names what was wrong. Nothing is changed.
//
// With ACLs off every request is allowed, as before ACLs existed.

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
	Node     string // an agent's node id, once its credentials were checked
	// CertRole and CertName are the role and common name of the client
	// certificate the caller presented, once verified (client_cert.go).
	CertRole pki.Role
	CertName string
}

// proven reports whether the caller proved who it is: a valid token, a
// node's secret, or a certificate of the cell's CA.
func (c *caller) proven() bool { return c.Accessor != "" || c.Node != "" || c.CertRole != "" }

type callerKey struct{}

func callerOf(ctx context.Context) *caller {
	c, _ := ctx.Value(callerKey{}).(*caller)
	if c == nil {
		return &caller{}
	}
	return c
}

// nodeOf is the node a ByNode request proved it speaks for.
func nodeOf(r *http.Request) string { return callerOf(r.Context()).Node }

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

func aclError(code, format string, args ...any) error { return route.Forbidden(code, format, args...) }

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

// allows reports whether token t holds rule's capability, in namespace ns
// for a namespace rule, or on the cell.
func allows(snap *state.Snapshot, t *state.ACLToken, rule route.Rule, ns string) bool {
	if t.Management {
		return true
	}
	for _, name := range t.Policies {
		p := snap.ACLPolicy(name)
		if p == nil {
			continue // deleted: grants nothing
		}
		if rule.Scope == route.ScopeCell {
			if slices.Contains(p.Cell, rule.Cap) {
				return true
			}
			continue
		}
		if slices.Contains(p.Namespaces[ns], rule.Cap) || slices.Contains(p.Namespaces["*"], rule.Cap) {
			return true
		}
	}
	return false
}

// authorize checks r against rt's rule: nil when its caller may, a 403
// naming what is missing otherwise. It records the caller's token (ACLs
// on or off: the audit log names it).
func (s *API) authorize(r *http.Request, rt route.Route) error {
	if err := s.certOf(r); err != nil {
		return err
	}
	snap := s.state().Snapshot()
	tok, err := resolveToken(snap, requestToken(r), s.cfg.Now())
	if tok != nil {
		c := callerOf(r.Context())
		c.Accessor, c.Name = tok.AccessorID, tok.Name
	}
	switch rt.Rule.Scope {
	case route.ScopeNode:
		return s.authenticate(r, snap, rt) // ACLs on or off
	case route.ScopeOpen, route.ScopeNodeJoin: // a registration's handler checks it
		return nil
	}
	if !s.cfg.ACL {
		return s.requireUserCert(r, rt)
	}
	if err != nil {
		return err
	}
	if tok == nil {
		return aclError("acl-no-token", "ACLs are on: %s %s needs a token (STRATA_TOKEN or --token) with %s", r.Method, r.URL.Path, describe(rt.Rule, aclNamespace(r, rt)))
	}
	if rt.Rule.Scope == route.ScopeToken {
		return nil
	}
	ns := aclNamespace(r, rt)
	if !allows(snap, tok, rt.Rule, ns) {
		return aclError("acl-denied", "token %s (%s) lacks %s (policies: %s)", tok.AccessorID, tok.Name, describe(rt.Rule, ns), policyList(tok))
	}
	return nil
}

// may reports whether r's caller holds rule (in namespace ns for a
// namespace rule), for a handler that serves each caller what it may
// read: ACLs off, everyone does.
func (s *API) may(r *http.Request, snap *state.Snapshot, rule route.Rule, ns string) bool {
	if !s.cfg.ACL {
		return true
	}
	tok, err := resolveToken(snap, requestToken(r), s.cfg.Now())
	return err == nil && tok != nil && allows(snap, tok, rule, ns)
}

// aclNamespace is the namespace the ACLs check a request in: the path's
// for a route with a NamespaceParam, the request's otherwise.
func aclNamespace(r *http.Request, rt route.Route) string {
	if rt.NamespaceParam != "" {
		if name := r.PathValue(rt.NamespaceParam); spec.CheckName(name) == "" {
			return name
		}
	}
	return requestNamespace(r)
}

func describe(rule route.Rule, ns string) string {
	if rule.Scope == route.ScopeCell {
		return fmt.Sprintf("capability %q on the cell", rule.Cap)
	}
	return fmt.Sprintf("capability %q in namespace %q", rule.Cap, ns)
}

func policyList(t *state.ACLToken) string {
	if len(t.Policies) == 0 {
		return "none"
	}
	return strings.Join(t.Policies, ", ")
}
