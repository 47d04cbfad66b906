package httpapi

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fieldpath"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// maxTokenTTL bounds a token's lifetime.
const maxTokenTTL = 10 * 365 * 24 * time.Hour

// publicToken is a stored token as the API shows it: no secret, no hash.
func publicToken(t *state.ACLToken) *api.ACLToken {
	c := t.ACLToken
	c.SecretID = ""
	return &c
}

// newToken makes a token and its stored record; the record's copy holds
// only the secret's hash.
func (s *API) newToken(name string, policies []string, management bool, ttl time.Duration) (*api.ACLToken, *state.ACLToken) {
	now := s.cfg.Now().UTC()
	t := api.ACLToken{AccessorID: s.make.NewID(), SecretID: nodeauth.NewSecret(), Name: name, Policies: policies,
		Management: management, CreateTime: now}
	if ttl > 0 {
		exp := now.Add(ttl)
		t.ExpiresAt = &exp
	}
	rec := &state.ACLToken{ACLToken: t, SecretHash: aclTokenHash(t.SecretID)}
	rec.SecretID = ""
	return &t, rec
}

func (s *API) handleACLBootstrap(w http.ResponseWriter, r *http.Request) error {
	if !s.cfg.ACL {
		return &route.Error{Status: http.StatusBadRequest, Code: "acl-disabled", Msg: "ACLs are off on this server: start the servers with --acl first"}
	}
	if s.state().Snapshot().ACLBootstrapped() {
		return &route.Error{Status: http.StatusConflict, Code: "acl-bootstrapped", Msg: "the cell's ACLs are already bootstrapped; ask the holder of a management token"}
	}
	tok, rec := s.newToken("bootstrap management token", nil, true, 0)
	if _, err := s.propose(&fsm.ACLBootstrap{Token: rec, Bootstrap: true}); err != nil {
		if errors.Is(err, state.ErrACLBootstrapped) {
			err = &route.Error{Status: http.StatusConflict, Code: "acl-bootstrapped", Msg: "the cell's ACLs are already bootstrapped"}
		}
		return err
	}
	s.logger.Info("ACLs bootstrapped", "accessor", tok.AccessorID)
	route.WriteJSON(w, http.StatusOK, tok)
	return nil
}

func (s *API) handleACLTokenSelf(w http.ResponseWriter, r *http.Request) error {
	tok, err := resolveToken(s.state().Snapshot(), requestToken(r), s.cfg.Now())
	if err == nil && tok == nil {
		err = aclError("acl-no-token", "no token given (STRATA_TOKEN or --token)")
	}
	if err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, publicToken(tok))
	return nil
}

func (s *API) handleListACLPolicies(w http.ResponseWriter, r *http.Request) error {
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		out := snap.ACLPolicies(ws)
		if out == nil {
			out = []*api.ACLPolicy{}
		}
		return out, snap.TableIndex(ws, state.TableACLPolicies), nil
	})
}

func (s *API) handleGetACLPolicy(w http.ResponseWriter, r *http.Request) error {
	name, err := route.PathID(r, "name")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		if p := snap.ACLPolicy(name); p != nil {
			return p, snap.TableIndex(ws, state.TableACLPolicies), nil
		}
		return nil, 0, route.NotFound("policy %q not found", name)
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
	return route.Invalid("invalid-policy", f)
}

func (s *API) handleApplyACLPolicy(w http.ResponseWriter, r *http.Request) error {
	var p api.ACLPolicy
	if err := route.DecodeJSON(w, r, "invalid-policy", &p); err != nil {
		return err
	}
	if err := validatePolicy(&p); err != nil {
		return err
	}
	if _, err := s.propose(&fsm.UpsertACLPolicy{Policy: &p}); err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, s.state().Snapshot().ACLPolicy(p.Name))
	return nil
}

func (s *API) handleDeleteACLPolicy(w http.ResponseWriter, r *http.Request) error {
	name, err := route.PathID(r, "name")
	if err != nil {
		return err
	}
	if s.state().Snapshot().ACLPolicy(name) == nil {
		return route.NotFound("policy %q not found", name)
	}
	idx, err := s.propose(&fsm.DeleteACLPolicy{Name: name})
	if err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, map[string]any{"index": idx})
	return nil
}

func (s *API) handleListACLTokens(w http.ResponseWriter, r *http.Request) error {
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		out := []*api.ACLToken{}
		for _, t := range snap.ACLTokens(ws) {
			out = append(out, publicToken(t))
		}
		return out, snap.TableIndex(ws, state.TableACLTokens), nil
	})
}

func (s *API) handleGetACLToken(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "accessor")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		if t := snap.ACLTokenByAccessor(id); t != nil {
			return publicToken(t), snap.TableIndex(ws, state.TableACLTokens), nil
		}
		return nil, 0, route.NotFound("token %q not found", id)
	})
}

func (s *API) handleCreateACLToken(w http.ResponseWriter, r *http.Request) error {
	var req api.ACLTokenRequest
	if err := route.DecodeJSON(w, r, "invalid-token", &req); err != nil {
		return err
	}
	snap := s.state().Snapshot()
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
		return route.Invalid("invalid-token", f)
	}
	tok, rec := s.newToken(req.Name, req.Policies, req.Management, ttl)
	if _, err := s.propose(&fsm.UpsertACLToken{Token: rec}); err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, tok)
	return nil
}

func (s *API) handleRevokeACLToken(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "accessor")
	if err != nil {
		return err
	}
	old := s.state().Snapshot().ACLTokenByAccessor(id)
	if old == nil {
		return route.NotFound("token %q not found", id)
	}
	if old.Revoked {
		route.WriteJSON(w, http.StatusOK, publicToken(old))
		return nil
	}
	rec := *old
	now := s.cfg.Now().UTC()
	rec.Revoked, rec.RevokeTime = true, &now
	if _, err := s.propose(&fsm.UpsertACLToken{Token: &rec}); err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, publicToken(&rec))
	return nil
}
