package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// The namespaces API (docs/tenants.md): a cell manager applies and deletes
// namespaces with their quotas; a namespace's readers see it, with what it
// holds. Writes go through raft like any other and are audited by the
// ACL layer.

func (s *Server) namespaceRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/namespaces", s.handleListNamespaces)
	mux.HandleFunc("GET /v1/namespaces/{name}", s.handleGetNamespace) // namespaceShowRoute
	mux.HandleFunc("PUT /v1/namespaces", s.handleApplyNamespace)
	mux.HandleFunc("DELETE /v1/namespaces/{name}", s.handleDeleteNamespace)
}

// namespaceStatus is a namespace (the implicit default one when it was
// never applied) with what it holds.
func namespaceStatus(snap *state.Snapshot, name string) *api.NamespaceStatus {
	st := &api.NamespaceStatus{Namespace: api.Namespace{Name: name}}
	if n := snap.Namespace(name); n != nil {
		st.Namespace = *n
	}
	st.Usage = snap.NamespaceUsage(name)
	st.Workloads = len(snap.WorkloadsIn(nil, name))
	return st
}

func (s *Server) handleListNamespaces(w http.ResponseWriter, r *http.Request) {
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		names := []string{}
		hasDefault := false
		for _, n := range snap.Namespaces(ws) {
			names = append(names, n.Name)
			hasDefault = hasDefault || n.Name == api.DefaultNamespace
		}
		if !hasDefault {
			names = append([]string{api.DefaultNamespace}, names...)
		}
		out := make([]*api.NamespaceStatus, 0, len(names))
		for _, name := range names {
			out = append(out, namespaceStatus(snap, name))
		}
		idx := max(snap.TableIndex(ws, state.TableNamespaces), snap.TableIndex(ws, state.TableAllocs), snap.TableIndex(ws, state.TableWorkloads))
		return out, idx, nil
	})
}

func (s *Server) handleGetNamespace(w http.ResponseWriter, r *http.Request) {
	name, err := pathName(r, "name")
	if err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		if name != api.DefaultNamespace && snap.Namespace(name) == nil {
			return nil, 0, notFound("namespace %q not found", name)
		}
		idx := max(snap.TableIndex(ws, state.TableNamespaces), snap.TableIndex(ws, state.TableAllocs), snap.TableIndex(ws, state.TableWorkloads))
		return namespaceStatus(snap, name), idx, nil
	})
}

// maxPriority is the highest priority any class allows.
const maxPriority = 1999

// validateNamespace checks a namespace as applied: a name, a bounded
// description, and quota limits that are not negative.
func validateNamespace(n *api.Namespace) error {
	var f fieldErrors
	f.check("name", spec.CheckName(n.Name))
	f.check("description", checkText(n.Description, maxTextBytes))
	if q := n.Quota; q != nil {
		for _, d := range []struct {
			path  string
			limit *int64
		}{
			{"quota.cpuMilli", q.CPUMilli},
			{"quota.memoryBytes", q.MemoryBytes},
			{"quota.gpuMilli", q.GPUMilli},
			{"quota.devices", q.Devices},
			{"quota.allocations", q.Allocations},
		} {
			if d.limit != nil && *d.limit < 0 {
				f.add(d.path, "must not be negative, got %d (omit it for no limit)", *d.limit)
			}
		}
		if q.MaxPriority != nil && (*q.MaxPriority < 0 || *q.MaxPriority > maxPriority) {
			f.add("quota.maxPriority", "must be 0..%d, got %d", maxPriority, *q.MaxPriority)
		}
	}
	if len(f) == 0 {
		return nil
	}
	return invalid("invalid-namespace", f)
}

func (s *Server) handleApplyNamespace(w http.ResponseWriter, r *http.Request) {
	var n api.Namespace
	if err := decodeJSON(w, r, "invalid-namespace", &n); err != nil {
		s.fail(w, err)
		return
	}
	if err := validateNamespace(&n); err != nil {
		s.fail(w, err)
		return
	}
	n.CreateIndex, n.ModifyIndex = 0, 0
	if _, err := s.propose(&fsm.UpsertNamespace{Namespace: &n}); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.State().Snapshot().Namespace(n.Name))
}

func (s *Server) handleDeleteNamespace(w http.ResponseWriter, r *http.Request) {
	name, err := pathName(r, "name")
	if err != nil {
		s.fail(w, err)
		return
	}
	snap := s.State().Snapshot()
	if snap.Namespace(name) == nil {
		s.fail(w, notFound("namespace %q not found", name))
		return
	}
	if n := len(snap.WorkloadsIn(nil, name)); n > 0 {
		s.fail(w, namespaceNotEmpty(name, n))
		return
	}
	idx, err := s.propose(&fsm.DeleteNamespace{Name: name})
	if errors.Is(err, state.ErrNamespaceNotEmpty) { // a workload came meanwhile
		err = namespaceNotEmpty(name, len(s.State().Snapshot().WorkloadsIn(nil, name)))
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"index": idx})
}

func namespaceNotEmpty(name string, workloads int) error {
	return &httpError{status: http.StatusConflict, code: "namespace-not-empty",
		msg: "namespace " + name + " holds " + strconv.Itoa(workloads) + " workload(s); purge them first (strata stop --purge -n " + name + ")"}
}
