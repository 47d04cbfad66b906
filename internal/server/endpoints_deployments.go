package server

import (
	"net/http"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/state"
)

// The deployment and history endpoints (docs/deployments.md).

var deploymentRouteRules = map[string]aclRule{
	"POST /v1/workloads/plan":              nsSubmit,
	"GET /v1/workloads/{name}/versions":    nsRead,
	"POST /v1/workloads/{name}/revert":     nsSubmit,
	"GET /v1/workloads/{name}/deployments": nsRead,
	"GET /v1/deployments":                  nsRead,
	"GET /v1/deployments/{id}":             nsRead,
	"POST /v1/deployments/{id}/promote":    nsSubmit,
	"POST /v1/deployments/{id}/fail":       nsSubmit,
}

func init() {
	for route, rule := range deploymentRouteRules {
		routeRules[route] = rule
	}
}

func (s *Server) deploymentRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/workloads/plan", s.handlePlanWorkload)
	mux.HandleFunc("GET /v1/workloads/{name}/versions", s.handleWorkloadVersions)
	mux.HandleFunc("POST /v1/workloads/{name}/revert", s.handleRevertWorkload)
	mux.HandleFunc("GET /v1/workloads/{name}/deployments", s.handleWorkloadDeployments)
	mux.HandleFunc("GET /v1/deployments", s.handleListDeployments)
	mux.HandleFunc("GET /v1/deployments/{id}", s.handleGetDeployment)
	mux.HandleFunc("POST /v1/deployments/{id}/promote", s.handlePromoteDeployment)
	mux.HandleFunc("POST /v1/deployments/{id}/fail", s.handleFailDeployment)
}

func (s *Server) handleWorkloadVersions(w http.ResponseWriter, r *http.Request) {
	name, err := pathName(r, "name")
	if err != nil {
		s.fail(w, err)
		return
	}
	ns, err := namespaceOf(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		out := snap.WorkloadVersions(ws, ns, name)
		if len(out) == 0 {
			return nil, 0, notFound("workload %q has no versions", name)
		}
		return out, snap.TableIndex(ws, state.TableVersions), nil
	})
}

func (s *Server) handleRevertWorkload(w http.ResponseWriter, r *http.Request) {
	name, err := pathName(r, "name")
	if err != nil {
		s.fail(w, err)
		return
	}
	ns, err := namespaceOf(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	var req api.RevertRequest
	if err := decodeJSON(w, r, "invalid-revert", &req); err != nil {
		s.fail(w, err)
		return
	}
	snap := s.State().Snapshot()
	cur := snap.Workload(ns, name)
	if cur == nil {
		s.fail(w, notFound("workload %q not found", name))
		return
	}
	v := snap.WorkloadVersion(ns, name, req.Version)
	if v == nil {
		s.fail(w, invalid("invalid-revert", []api.FieldError{{Path: "version",
			Message: "version not kept (strata history " + name + " lists the kept ones)"}}))
		return
	}
	wl := copyWorkload(v.Workload)
	wl.SubmitTime, wl.Stopped = s.cfg.Now(), false
	cmd := s.registration(wl, cur, api.TriggerWorkloadRegister)
	idx, answer, err := s.proposeFor(cmd)
	if err != nil {
		s.fail(w, err)
		return
	}
	if a, ok := answer.(fsm.Registered); ok {
		wl.Version = a.Version
	}
	resp := &api.RegisterResponse{Name: name, Version: wl.Version, EvalID: cmd.Eval.ID, Index: idx}
	if cmd.Deployment != nil {
		resp.DeploymentID = cmd.Deployment.ID
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleWorkloadDeployments(w http.ResponseWriter, r *http.Request) {
	name, err := pathName(r, "name")
	if err != nil {
		s.fail(w, err)
		return
	}
	ns, err := namespaceOf(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		out := snap.DeploymentsByWorkload(ws, ns, name)
		if out == nil {
			out = []*api.Deployment{}
		}
		return out, snap.TableIndex(ws, state.TableDeployments), nil
	})
}

func (s *Server) handleListDeployments(w http.ResponseWriter, r *http.Request) {
	ns, err := namespaceOf(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
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
				return nil, badRequest("deployment id prefix %q is ambiguous", id)
			}
			found = d
		}
	}
	if found == nil {
		return nil, notFound("deployment %q not found", id)
	}
	return found, nil
}

func (s *Server) handleGetDeployment(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	ns, err := namespaceOf(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		snap.Deployments(ws)
		d, err := findDeployment(snap, ns, id)
		if err != nil {
			return nil, 0, err
		}
		return d, snap.TableIndex(ws, state.TableDeployments), nil
	})
}

func (s *Server) handlePromoteDeployment(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	ns, err := namespaceOf(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	var req api.PromoteRequest
	if err := decodeJSON(w, r, "invalid-promote", &req); err != nil {
		s.fail(w, err)
		return
	}
	snap := s.State().Snapshot()
	d, err := findDeployment(snap, ns, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	var fields []api.FieldError
	canaries := false
	for i, g := range req.Groups {
		if d.Group(g) == nil {
			fields = append(fields, api.FieldError{Path: "groups[" + itoa(i) + "]", Message: "no group " + g + " in deployment " + d.ID})
		}
	}
	for _, g := range d.Groups {
		canaries = canaries || g.DesiredCanaries > 0
	}
	switch {
	case len(fields) > 0:
		s.fail(w, invalid("invalid-promote", fields))
		return
	case api.DeploymentTerminal(d.Status):
		s.fail(w, &httpError{status: http.StatusConflict, code: "deployment-final", msg: "deployment " + d.ID + " is " + d.Status + ": nothing to promote"})
		return
	case !canaries:
		s.fail(w, &httpError{status: http.StatusConflict, code: "no-canaries", msg: "deployment " + d.ID + " has no canaries to promote"})
		return
	}
	prio := 0
	if wl := snap.Workload(d.Namespace, d.Workload); wl != nil {
		prio = wl.Priority
	}
	cmd := &fsm.PromoteDeployment{ID: d.ID, Groups: req.Groups, Eval: s.newEval(d.Namespace, d.Workload, prio, api.TriggerDeployment, ""), Time: s.cfg.Now()}
	idx, err := s.propose(cmd)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, &api.DeploymentResponse{Deployment: d.ID, EvalID: cmd.Eval.ID, Index: idx})
}

func (s *Server) handleFailDeployment(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	ns, err := namespaceOf(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	var req api.FailRequest
	if err := decodeJSON(w, r, "invalid-fail", &req); err != nil {
		s.fail(w, err)
		return
	}
	if len(req.Reason) > 1024 {
		s.fail(w, invalid("invalid-fail", []api.FieldError{{Path: "reason", Message: "at most 1024 bytes"}}))
		return
	}
	snap := s.State().Snapshot()
	d, err := findDeployment(snap, ns, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	if api.DeploymentTerminal(d.Status) {
		s.fail(w, &httpError{status: http.StatusConflict, code: "deployment-final", msg: "deployment " + d.ID + " is already " + d.Status})
		return
	}
	reason := "failed by an operator"
	if req.Reason != "" {
		reason += ": " + req.Reason
	}
	cmd, err := s.revertCommand(snap, d, reason, d.AutoRevert())
	if err != nil {
		s.fail(w, err)
		return
	}
	idx, err := s.propose(cmd)
	if err != nil {
		s.fail(w, err)
		return
	}
	resp := &api.DeploymentResponse{Deployment: d.ID, Index: idx}
	if cmd.Eval != nil {
		resp.EvalID = cmd.Eval.ID
	}
	if cmd.Revert != nil {
		resp.EvalID = cmd.Revert.Eval.ID
		if after := s.State().Snapshot().Deployment(d.ID); after != nil {
			resp.RevertedTo = after.RevertedTo // the version the FSM gave it
		}
	}
	writeJSON(w, http.StatusOK, resp)
}
