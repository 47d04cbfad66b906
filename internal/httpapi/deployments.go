package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/state"
	"github.com/strata-dev/strata/internal/trigger"
)

// The deployment and history endpoints (docs/deployments.md).

func (s *API) handleWorkloadVersions(w http.ResponseWriter, r *http.Request) error {
	name, ns, err := nameInNamespace(r, "name")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		out := snap.WorkloadVersions(ws, ns, name)
		if len(out) == 0 {
			return nil, 0, route.NotFound("workload %q has no versions", name)
		}
		return out, snap.TableIndex(ws, state.TableVersions), nil
	})
}

func (s *API) handleRevertWorkload(w http.ResponseWriter, r *http.Request) error {
	name, ns, err := nameInNamespace(r, "name")
	if err != nil {
		return err
	}
	var req api.RevertRequest
	if err := route.DecodeJSON(w, r, "invalid-revert", &req); err != nil {
		return err
	}
	snap := s.state().Snapshot()
	cur := snap.Workload(ns, name)
	if cur == nil {
		return route.NotFound("workload %q not found", name)
	}
	v := snap.WorkloadVersion(ns, name, req.Version)
	if v == nil {
		return route.Invalid("invalid-revert", []api.FieldError{{Path: "version",
			Message: "version not kept (strata history " + name + " lists the kept ones)"}})
	}
	wl := trigger.CopyWorkload(v.Workload)
	wl.SubmitTime, wl.Stopped = s.cfg.Now(), false
	cmd := s.make.Registration(wl, cur, api.TriggerWorkloadRegister)
	if err := withinLimits(snap, cmd); err != nil {
		return err
	}
	idx, answer, err := s.proposer.Propose(cmd)
	if err != nil {
		return limitError(err)
	}
	if a, ok := answer.(fsm.Registered); ok {
		wl.Version = a.Version
	}
	resp := &api.RegisterResponse{Name: name, Version: wl.Version, EvalID: cmd.Eval.ID, Index: idx}
	if cmd.Deployment != nil {
		resp.DeploymentID = cmd.Deployment.ID
	}
	route.WriteJSON(w, http.StatusOK, resp)
	return nil
}

func (s *API) handleWorkloadDeployments(w http.ResponseWriter, r *http.Request) error {
	name, ns, err := nameInNamespace(r, "name")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		out := snap.DeploymentsByWorkload(ws, ns, name)
		if out == nil {
			out = []*api.Deployment{}
		}
		return out, snap.TableIndex(ws, state.TableDeployments), nil
	})
}

func (s *API) handleListDeployments(w http.ResponseWriter, r *http.Request) error {
	ns, err := namespaceOf(r)
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		out := []*api.Deployment{}
		for _, d := range snap.Deployments(ws) {
			if api.NamespaceOf(d.Namespace) == ns {
				out = append(out, d)
			}
		}
		return out, snap.TableIndex(ws, state.TableDeployments), nil
	})
}

// findDeployment resolves an id or a unique prefix of one in namespace ns:
// another namespace's deployment is not found.
func findDeployment(snap *state.Snapshot, ns, id string) (*api.Deployment, error) {
	if d := snap.Deployment(id); d != nil {
		if err := inNamespace(d.Namespace, ns, "deployment", id); err != nil {
			return nil, err
		}
		return d, nil
	}
	var found *api.Deployment
	for _, d := range snap.Deployments(nil) {
		if strings.HasPrefix(d.ID, id) && api.NamespaceOf(d.Namespace) == ns {
			if found != nil {
				return nil, route.BadRequest("deployment id prefix %q is ambiguous", id)
			}
			found = d
		}
	}
	if found == nil {
		return nil, route.NotFound("deployment %q not found", id)
	}
	return found, nil
}

func (s *API) handleGetDeployment(w http.ResponseWriter, r *http.Request) error {
	id, ns, err := idInNamespace(r, "id")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		snap.Deployments(ws)
		d, err := findDeployment(snap, ns, id)
		if err != nil {
			return nil, 0, err
		}
		if g := s.leader.Guard(d.ID); g != nil {
			d = d.Copy() // the stored one stays as it is
			d.Guard = g
		}
		return d, snap.TableIndex(ws, state.TableDeployments), nil
	})
}

func (s *API) handlePromoteDeployment(w http.ResponseWriter, r *http.Request) error {
	id, ns, err := idInNamespace(r, "id")
	if err != nil {
		return err
	}
	var req api.PromoteRequest
	if err := route.DecodeJSON(w, r, "invalid-promote", &req); err != nil {
		return err
	}
	snap := s.state().Snapshot()
	d, err := findDeployment(snap, ns, id)
	if err != nil {
		return err
	}
	var fields []api.FieldError
	canaries := false
	for i, g := range req.Groups {
		if d.Group(g) == nil {
			fields = append(fields, api.FieldError{Path: "groups[" + strconv.Itoa(i) + "]", Message: "no group " + g + " in deployment " + d.ID})
		}
	}
	for _, g := range d.Groups {
		canaries = canaries || g.DesiredCanaries > 0
	}
	switch {
	case len(fields) > 0:
		return route.Invalid("invalid-promote", fields)
	case api.DeploymentTerminal(d.Status):
		return &route.Error{Status: http.StatusConflict, Code: "deployment-final", Msg: "deployment " + d.ID + " is " + d.Status + ": nothing to promote"}
	case !canaries:
		return &route.Error{Status: http.StatusConflict, Code: "no-canaries", Msg: "deployment " + d.ID + " has no canaries to promote"}
	}
	cmd := s.make.Promote(snap, d, req.Groups)
	idx, err := s.propose(cmd)
	if err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, &api.DeploymentResponse{Deployment: d.ID, EvalID: cmd.Eval.ID, Index: idx})
	return nil
}

func (s *API) handleFailDeployment(w http.ResponseWriter, r *http.Request) error {
	id, ns, err := idInNamespace(r, "id")
	if err != nil {
		return err
	}
	var req api.FailRequest
	if err := route.DecodeJSON(w, r, "invalid-fail", &req); err != nil {
		return err
	}
	if len(req.Reason) > 1024 {
		return route.Invalid("invalid-fail", []api.FieldError{{Path: "reason", Message: "at most 1024 bytes"}})
	}
	snap := s.state().Snapshot()
	d, err := findDeployment(snap, ns, id)
	if err != nil {
		return err
	}
	if api.DeploymentTerminal(d.Status) {
		return &route.Error{Status: http.StatusConflict, Code: "deployment-final", Msg: "deployment " + d.ID + " is already " + d.Status}
	}
	reason := "failed by an operator"
	if req.Reason != "" {
		reason += ": " + req.Reason
	}
	cmd := s.make.Revert(snap, d, reason, d.AutoRevert())
	idx, err := s.propose(cmd)
	if err != nil {
		return err
	}
	resp := &api.DeploymentResponse{Deployment: d.ID, Index: idx}
	if cmd.Eval != nil {
		resp.EvalID = cmd.Eval.ID
	}
	if cmd.Revert != nil {
		resp.EvalID = cmd.Revert.Eval.ID
		if after := s.state().Snapshot().Deployment(d.ID); after != nil {
			resp.RevertedTo = after.RevertedTo // the version the FSM gave it
		}
	}
	route.WriteJSON(w, http.StatusOK, resp)
	return nil
}
