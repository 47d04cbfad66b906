package server

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fieldpath"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// maxTokenTTL bounds a token's lifetime.
const maxTokenTTL = 10 * 365 * 24 * time.Hour

func (s *Server) aclRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/acl/bootstrap", s.handleACLBootstrap)
	mux.HandleFunc("GET /v1/acl/token/self", s.handleACLTokenSelf)
	mux.HandleFunc("GET /v1/acl/policies", s.handleListACLPolicies)
	mux.HandleFunc("GET /v1/acl/policies/{name}", s.handleGetACLPolicy)
	mux.HandleFunc("PUT /v1/acl/policies", s.handleApplyACLPolicy)
	mux.HandleFunc("DELETE /v1/acl/policies/{name}", s.handleDeleteACLPolicy)
	mux.HandleFunc("GET /v1/acl/tokens", s.handleListACLTokens)
	mux.HandleFunc("GET /v1/acl/tokens/{accessor}", s.handleGetACLToken)
	mux.HandleFunc("POST /v1/acl/tokens", s.handleCreateACLToken)
	mux.HandleFunc("DELETE /v1/acl/tokens/{accessor}", s.handleRevokeACLToken)
	mux.HandleFunc("GET /v1/audit", s.handleAudit)
}

// publicToken is a stored token as the API shows it: no secret, no hash.
func publicToken(t *state.ACLToken) *api.ACLToken {
	c := t.ACLToken
	c.SecretID = ""
	return &c
}

// newToken makes a token and its stored record; the record's copy holds
// only the secret's hash.
func (s *Server) newToken(name string, policies []string, management bool, ttl time.Duration) (*api.ACLToken, *state.ACLToken) {
	now := s.cfg.Now().UTC()
	t := api.ACLToken{AccessorID: newID(), SecretID: nodeauth.NewSecret(), Name: name, Policies: policies,
		Management: management, CreateTime: now}
	if ttl > 0 {
		exp := now.Add(ttl)
		t.ExpiresAt = &exp
	}
	rec := &state.ACLToken{ACLToken: t, SecretHash: aclTokenHash(t.SecretID)}
	rec.SecretID = ""
	return &t, rec
}

func (s *Server) handleACLBootstrap(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.ACL {
		s.fail(w, &httpError{status: http.StatusBadRequest, code: "acl-disabled", msg: "ACLs are off on this server: start the servers with --acl first"})
		return
	}
	if s.State().Snapshot().ACLBootstrapped() {
		s.fail(w, &httpError{status: http.StatusConflict, code: "acl-bootstrapped", msg: "the cell's ACLs are already bootstrapped; ask the holder of a management token"})
		return
	}
	tok, rec := s.newToken("bootstrap management token", nil, true, 0)
	if _, err := s.propose(&fsm.ACLBootstrap{Token: rec, Bootstrap: true}); err != nil {
		if errors.Is(err, state.ErrACLBootstrapped) {
			err = &httpError{status: http.StatusConflict, code: "acl-bootstrapped", msg: "the cell's ACLs are already bootstrapped"}
		}
		s.fail(w, err)
		return
	}
	s.logger.Info("ACLs bootstrapped", "accessor", tok.AccessorID)
	writeJSON(w, http.StatusOK, tok)
}

func (s *Server) handleACLTokenSelf(w http.ResponseWriter, r *http.Request) {
	tok, err := resolveToken(s.State().Snapshot(), requestToken(r), s.cfg.Now())
	if err == nil && tok == nil {
		err = aclError("acl-no-token", "no token given (STRATA_TOKEN or --token)")
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, publicToken(tok))
}

func (s *Server) handleListACLPolicies(w http.ResponseWriter, r *http.Request) {
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		out := snap.ACLPolicies(ws)
		if out == nil {
			out = []*api.ACLPolicy{}
		}
		return out, snap.TableIndex(ws, state.TableACLPolicies), nil
	})
}

func (s *Server) handleGetACLPolicy(w http.ResponseWriter, r *http.Request) {
	name, err := pathID(r, "name")
	if err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		if p := snap.ACLPolicy(name); p != nil {
			return p, snap.TableIndex(ws, state.TableACLPolicies), nil
		}
		return nil, 0, notFound("policy %q not found", name)
	})
}

func validatePolicy(p *api.ACLPolicy) error {
	var f fieldErrors
	f.check("name", spec.CheckName(p.Name))
	f.check("description", checkText(p.Description, maxTextBytes))
	for _, ns := range slices.Sorted(maps.Keys(p.Namespaces)) {
		path := fieldpath.Join("namespaces", ns)
		if ns != "*" {
			if problem := spec.CheckName(ns); problem != "" {
				f.add(path, "not a namespace: %s", problem)
				continue
			}
		}
		for i, c := range p.Namespaces[ns] {
			if !slices.Contains(api.NamespaceCapabilities, c) {
				f.add(fieldpath.Index(path, i), "unknown capability %.64q in a namespace (want one of %v)", c, api.NamespaceCapabilities)
			}
		}
	}
	for i, c := range p.Cell {
		if !slices.Contains(api.CellCapabilities, c) {
			f.add(fieldpath.Index("cell", i), "unknown capability %.64q on the cell (want one of %v)", c, api.CellCapabilities)
		}
	}
	if len(f) == 0 {
		return nil
	}
	return invalid("invalid-policy", f)
}

func (s *Server) handleApplyACLPolicy(w http.ResponseWriter, r *http.Request) {
	var p api.ACLPolicy
	if err := decodeJSON(w, r, "invalid-policy", &p); err != nil {
		s.fail(w, err)
		return
	}
	if err := validatePolicy(&p); err != nil {
		s.fail(w, err)
		return
	}
	if _, err := s.propose(&fsm.UpsertACLPolicy{Policy: &p}); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.State().Snapshot().ACLPolicy(p.Name))
}

func (s *Server) handleDeleteACLPolicy(w http.ResponseWriter, r *http.Request) {
	name, err := pathID(r, "name")
	if err != nil {
		s.fail(w, err)
		return
	}
	if s.State().Snapshot().ACLPolicy(name) == nil {
		s.fail(w, notFound("policy %q not found", name))
		return
	}
	idx, err := s.propose(&fsm.DeleteACLPolicy{Name: name})
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"index": idx})
}

func (s *Server) handleListACLTokens(w http.ResponseWriter, r *http.Request) {
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		out := []*api.ACLToken{}
		for _, t := range snap.ACLTokens(ws) {
			out = append(out, publicToken(t))
		}
		return out, snap.TableIndex(ws, state.TableACLTokens), nil
	})
}

func (s *Server) handleGetACLToken(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "accessor")
	if err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		if t := snap.ACLTokenByAccessor(id); t != nil {
			return publicToken(t), snap.TableIndex(ws, state.TableACLTokens), nil
		}
		return nil, 0, notFound("token %q not found", id)
	})
}

func (s *Server) handleCreateACLToken(w http.ResponseWriter, r *http.Request) {
	var req api.ACLTokenRequest
	if err := decodeJSON(w, r, "invalid-token", &req); err != nil {
		s.fail(w, err)
		return
	}
	snap := s.State().Snapshot()
	var f fieldErrors
	f.check("name", checkText(req.Name, 256))
	if req.Name == "" {
		f.add("name", "required: say whose token it is")
	}
	for i, p := range req.Policies {
		if snap.ACLPolicy(p) == nil {
			f.add(fieldpath.Index("policies", i), "no policy %.64q", p)
		}
	}
	if len(req.Policies) == 0 && !req.Management {
		f.add("policies", "required: at least one policy (or management: true)")
	}
	var ttl time.Duration
	if req.TTL != "" {
		d, err := time.ParseDuration(req.TTL)
		switch {
		case err != nil:
			f.add("ttl", "not a duration: %v", err)
		case d <= 0 || d > maxTokenTTL:
			f.add("ttl", "must be positive and at most %v, got %v", maxTokenTTL, d)
		}
		ttl = d
	}
	if len(f) > 0 {
		s.fail(w, invalid("invalid-token", f))
		return
	}
	tok, rec := s.newToken(req.Name, req.Policies, req.Management, ttl)
	if _, err := s.propose(&fsm.UpsertACLToken{Token: rec}); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, tok)
}

func (s *Server) handleRevokeACLToken(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "accessor")
	if err != nil {
		s.fail(w, err)
		return
	}
	old := s.State().Snapshot().ACLTokenByAccessor(id)
	if old == nil {
		s.fail(w, notFound("token %q not found", id))
		return
	}
	if old.Revoked {
		writeJSON(w, http.StatusOK, publicToken(old))
		return
	}
	rec := *old
	now := s.cfg.Now().UTC()
	rec.Revoked, rec.RevokeTime = true, &now
	if _, err := s.propose(&fsm.UpsertACLToken{Token: &rec}); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, publicToken(&rec))
}
