package server

import (
	"errors"
	"net/http"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// handleRegisterWorkload accepts a Workload document (YAML or JSON), parses
// and validates it with the same code as `strata validate`, and registers it
// with an evaluation in one raft entry. Bad input writes nothing.
func (s *Server) handleRegisterWorkload(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.fail(w, err)
		return
	}
	wl, err := spec.Parse(body)
	if err != nil {
		s.fail(w, specError(err))
		return
	}
	snap := s.State().Snapshot()
	ns, err := intoRequestNamespace(r, snap, wl)
	if err != nil {
		s.fail(w, err)
		return
	}
	if err := s.sealSecrets(wl, snap.Workload(ns, wl.Name)); err != nil {
		s.fail(w, err)
		return
	}
	q := newQuery(r)
	checkIndex, checked := q.one("checkIndex")
	index := q.uint("checkIndex")
	if err := q.err(); err != nil {
		s.fail(w, err)
		return
	}
	wl.SubmitTime = s.cfg.Now()
	wl.Unenforced = append(wl.Unenforced, windowNotices(wl, snap.CellConfig())...)
	cmd := s.registration(wl, snap.Workload(ns, wl.Name), api.TriggerWorkloadRegister)
	if checked && checkIndex != "" {
		cmd.CheckIndex = &index
	}
	eval := cmd.Eval
	idx, answer, err := s.proposeFor(cmd)
	if errors.Is(err, fsm.ErrWorkloadChanged) {
		s.fail(w, &httpError{status: http.StatusConflict, code: "workload-changed", msg: err.Error() + "; plan again",
			fields: []api.FieldError{{Path: "checkIndex", Message: "the workload changed since this index"}}})
		return
	}
	if errors.Is(err, state.ErrNamespaceMissing) {
		err = fieldError("unknown-namespace", "metadata.namespace", "namespace %q was deleted meanwhile", ns)
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	if r, ok := answer.(fsm.Registered); ok {
		wl.Version = r.Version // assigned by the FSM, in log order
	}
	resp := &api.RegisterResponse{Name: wl.Name, Version: wl.Version, EvalID: eval.ID, Index: idx, Unenforced: wl.Unenforced}
	if cmd.Deployment != nil {
		resp.DeploymentID = cmd.Deployment.ID
	}
	writeJSON(w, http.StatusOK, resp)
}

// specError turns spec validation errors into a 400 naming every field.
func specError(err error) error {
	var se *spec.Errors
	if errors.As(err, &se) {
		he := &httpError{status: http.StatusBadRequest, code: "invalid-workload", msg: err.Error()}
		for _, fe := range se.List {
			he.fields = append(he.fields, api.FieldError{Path: fe.Path, Message: fe.Message})
		}
		return he
	}
	return &httpError{status: http.StatusBadRequest, code: "invalid-workload", msg: err.Error()}
}

func (s *Server) handleListWorkloads(w http.ResponseWriter, r *http.Request) {
	if err := checkRequestNamespace(r); err != nil {
		s.fail(w, err)
		return
	}
	ns := requestNamespace(r)
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		out := []api.WorkloadSummary{}
		for _, wl := range snap.WorkloadsIn(ws, ns) {
			out = append(out, summarize(workloadStatus(wl, snap.Current(snap.AllocsByWorkload(ns, wl.Name)), snap.CurrentEvals(snap.EvalsByWorkload(nil, ns, wl.Name)))))
		}
		idx := max(snap.TableIndex(ws, state.TableWorkloads), snap.TableIndex(ws, state.TableAllocs), snap.TableIndex(ws, state.TableEvals))
		return out, idx, nil
	})
}

func (s *Server) handleWorkloadStatus(w http.ResponseWriter, r *http.Request) {
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
		wl := snap.Workload(ns, name)
		if wl == nil {
			return nil, 0, notFound("workload %q not found in namespace %q", name, ns)
		}
		st := workloadStatus(wl, snap.Current(snap.AllocsByWorkloadWatch(ws, ns, name)), snap.CurrentEvals(snap.EvalsByWorkload(ws, ns, name)))
		idx := max(snap.TableIndex(ws, state.TableWorkloads), snap.TableIndex(ws, state.TableAllocs), snap.TableIndex(ws, state.TableEvals))
		return st, idx, nil
	})
}

func (s *Server) handleStopWorkload(w http.ResponseWriter, r *http.Request) {
	name, err := pathName(r, "name")
	if err != nil {
		s.fail(w, err)
		return
	}
	q := newQuery(r)
	purge := q.boolean("purge")
	ns := q.namespace()
	if err := q.err(); err != nil {
		s.fail(w, err)
		return
	}
	// Whether the workload exists is decided where the stop is ordered: a
	// 404 from this server's state is confirmed by its leadership (as a
	// read is), and a workload seen here may be purged before the stop
	// applies (the FSM's answer says).
	wl := s.State().Snapshot().Workload(ns, name)
	if wl == nil {
		if err := s.confirmLeadership(); err != nil {
			s.fail(w, err)
			return
		}
		s.fail(w, notFound("workload %q not found in namespace %q", name, ns))
		return
	}
	eval := s.newEval(ns, name, wl.Priority, api.TriggerWorkloadStop, "")
	idx, answer, err := s.proposeFor(&fsm.StopWorkload{Namespace: ns, Name: name, Purge: purge, Eval: eval, Time: s.cfg.Now()})
	if err != nil {
		s.fail(w, err)
		return
	}
	if a, ok := answer.(fsm.Stopped); ok && !a.Found {
		s.fail(w, notFound("workload %q not found in namespace %q", name, ns))
		return
	}
	writeJSON(w, http.StatusOK, &api.StopResponse{EvalID: eval.ID, Index: idx})
}

func (s *Server) handleWorkloadAllocs(w http.ResponseWriter, r *http.Request) {
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
		if snap.Workload(ns, name) == nil && len(snap.AllocsByWorkload(ns, name)) == 0 {
			return nil, 0, notFound("workload %q not found in namespace %q", name, ns)
		}
		out := snap.Current(snap.AllocsByWorkloadWatch(ws, ns, name)) // never a purged predecessor's
		if out == nil {
			out = []*api.Allocation{}
		}
		return redactAllocs(out), snap.TableIndex(ws, state.TableAllocs), nil
	})
}

func (s *Server) handleWorkloadEvals(w http.ResponseWriter, r *http.Request) {
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
		out := snap.CurrentEvals(snap.EvalsByWorkload(ws, ns, name))
		if len(out) == 0 && snap.Workload(ns, name) == nil {
			return nil, 0, notFound("workload %q not found in namespace %q", name, ns)
		}
		if out == nil {
			out = []*api.Evaluation{}
		}
		return out, snap.TableIndex(ws, state.TableEvals), nil
	})
}
