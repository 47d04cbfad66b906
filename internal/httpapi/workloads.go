package httpapi

import (
	"errors"
	"net/http"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// handleRegisterWorkload accepts a Workload document (YAML or JSON), parses
// and validates it with the same code as `strata validate`, and registers it
// with an evaluation in one raft entry. Bad input writes nothing.
func (s *API) handleRegisterWorkload(w http.ResponseWriter, r *http.Request) error {
	wl, snap, ns, err := s.submission(w, r)
	if err != nil {
		return err
	}
	q := route.NewQuery(r)
	checkIndex, checked := q.One("checkIndex")
	index := q.Uint("checkIndex")
	if err := q.Err(); err != nil {
		return err
	}
	wl.SubmitTime = s.cfg.Now()
	wl.Unenforced = append(wl.Unenforced, windowNotices(wl, snap.CellConfig())...)
	cmd := s.make.Registration(wl, snap.Workload(ns, wl.Name), api.TriggerWorkloadRegister)
	if checked && checkIndex != "" {
		cmd.CheckIndex = &index
	}
	if err := withinLimits(snap, cmd); err != nil {
		return err
	}
	eval := cmd.Eval
	idx, answer, err := s.proposer.Propose(cmd)
	err = limitError(err)
	if errors.Is(err, fsm.ErrWorkloadChanged) {
		return &route.Error{Status: http.StatusConflict, Code: "workload-changed", Msg: err.Error() + "; plan again",
			Fields: []api.FieldError{{Path: "checkIndex", Message: "the workload changed since this index"}}}
	}
	if errors.Is(err, state.ErrNamespaceMissing) {
		err = route.FieldError("unknown-namespace", "metadata.namespace", "namespace %q was deleted meanwhile", ns)
	}
	if err != nil {
		return err
	}
	if r, ok := answer.(fsm.Registered); ok {
		wl.Version = r.Version // assigned by the FSM, in log order
	}
	resp := &api.RegisterResponse{Name: wl.Name, Version: wl.Version, EvalID: eval.ID, Index: idx, Unenforced: wl.Unenforced}
	if cmd.Deployment != nil {
		resp.DeploymentID = cmd.Deployment.ID
	}
	route.WriteJSON(w, http.StatusOK, resp)
	return nil
}

// submission reads a submitted Workload document (YAML or JSON) as `strata
// validate` does, puts it in the request's namespace, admits it there and
// seals its secrets, against the state it returns: what a run would
// register and a plan compares with the stored version (a plan that
// compared plaintext with the stored ciphertext called every workload
// with secrets changed).
func (s *API) submission(w http.ResponseWriter, r *http.Request) (wl *api.Workload, snap *state.Snapshot, ns string, err error) {
	body, err := route.ReadBody(w, r)
	if err != nil {
		return nil, nil, "", err
	}
	if wl, err = spec.Parse(body); err != nil {
		return nil, nil, "", specError(err)
	}
	snap = s.state().Snapshot()
	if ns, err = intoRequestNamespace(r, snap, wl); err != nil {
		return nil, nil, "", err
	}
	if err := s.sealSecrets(wl, snap.Workload(ns, wl.Name)); err != nil {
		return nil, nil, "", err
	}
	return wl, snap, ns, nil
}

// specError turns spec validation errors into a 400 naming every field.
func specError(err error) error {
	var se *spec.Errors
	if errors.As(err, &se) {
		he := &route.Error{Status: http.StatusBadRequest, Code: "invalid-workload", Msg: err.Error()}
		for _, fe := range se.List {
			he.Fields = append(he.Fields, api.FieldError{Path: fe.Path, Message: fe.Message})
		}
		return he
	}
	return &route.Error{Status: http.StatusBadRequest, Code: "invalid-workload", Msg: err.Error()}
}

func (s *API) handleListWorkloads(w http.ResponseWriter, r *http.Request) error {
	ns, err := namespaceOf(r)
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		out := []api.WorkloadSummary{}
		for _, wl := range snap.WorkloadsIn(ws, ns) {
			out = append(out, summarize(workloadStatus(wl, snap.Current(snap.AllocsByWorkload(ns, wl.Name)), snap.CurrentEvals(snap.EvalsByWorkload(nil, ns, wl.Name)))))
		}
		idx := max(snap.TableIndex(ws, state.TableWorkloads), snap.TableIndex(ws, state.TableAllocs), snap.TableIndex(ws, state.TableEvals))
		return out, idx, nil
	})
}

func (s *API) handleWorkloadStatus(w http.ResponseWriter, r *http.Request) error {
	name, ns, err := nameInNamespace(r, "name")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		wl := snap.Workload(ns, name)
		if wl == nil {
			return nil, 0, route.NotFound("workload %q not found in namespace %q", name, ns)
		}
		st := workloadStatus(wl, snap.Current(snap.AllocsByWorkloadWatch(ws, ns, name)), snap.CurrentEvals(snap.EvalsByWorkload(ws, ns, name)))
		idx := max(snap.TableIndex(ws, state.TableWorkloads), snap.TableIndex(ws, state.TableAllocs), snap.TableIndex(ws, state.TableEvals))
		return st, idx, nil
	})
}

func (s *API) handleStopWorkload(w http.ResponseWriter, r *http.Request) error {
	name, err := route.PathName(r, "name")
	if err != nil {
		return err
	}
	q := route.NewQuery(r)
	purge := q.Boolean("purge")
	ns := q.Namespace()
	if err := q.Err(); err != nil {
		return err
	}
	// Whether the workload exists is decided where the stop is ordered: a
	// 404 from this server's state is confirmed by its leadership (as a
	// read is), and a workload seen here may be purged before the stop
	// applies (the FSM's answer says).
	wl := s.state().Snapshot().Workload(ns, name)
	if wl == nil {
		if err := s.replica.ConfirmLeadership(); err != nil {
			return err
		}
		return route.NotFound("workload %q not found in namespace %q", name, ns)
	}
	cmd := s.make.Stop(ns, name, wl.Priority, purge)
	idx, answer, err := s.proposer.Propose(cmd)
	if err != nil {
		return err
	}
	if a, ok := answer.(fsm.Stopped); ok && !a.Found {
		return route.NotFound("workload %q not found in namespace %q", name, ns)
	}
	route.WriteJSON(w, http.StatusOK, &api.StopResponse{EvalID: cmd.Eval.ID, Index: idx})
	return nil
}

func (s *API) handleWorkloadAllocs(w http.ResponseWriter, r *http.Request) error {
	name, ns, err := nameInNamespace(r, "name")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		if snap.Workload(ns, name) == nil && len(snap.AllocsByWorkload(ns, name)) == 0 {
			return nil, 0, route.NotFound("workload %q not found in namespace %q", name, ns)
		}
		out := snap.Current(snap.AllocsByWorkloadWatch(ws, ns, name)) // never a purged predecessor's
		if out == nil {
			out = []*api.Allocation{}
		}
		return redactAllocs(out), snap.TableIndex(ws, state.TableAllocs), nil
	})
}

func (s *API) handleWorkloadEvals(w http.ResponseWriter, r *http.Request) error {
	name, ns, err := nameInNamespace(r, "name")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		out := snap.CurrentEvals(snap.EvalsByWorkload(ws, ns, name))
		if len(out) == 0 && snap.Workload(ns, name) == nil {
			return nil, 0, route.NotFound("workload %q not found in namespace %q", name, ns)
		}
		if out == nil {
			out = []*api.Evaluation{}
		}
		return out, snap.TableIndex(ws, state.TableEvals), nil
	})
}
