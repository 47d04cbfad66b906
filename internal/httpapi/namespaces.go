package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// The namespaces API (docs/tenants.md): a cell manager applies and deletes
// namespaces with their quotas; a namespace's readers see it, with what it
// holds. Writes go through raft like any other and are audited by the
// ACL layer.

// namespaceStatus is a namespace (the implicit default one when it was
// never applied) with what it holds.
func namespaceStatus(snap *state.Snapshot, name string) *api.NamespaceStatus {
	st := &api.NamespaceStatus{Namespace: api.Namespace{Name: name}}
	if n := snap.Namespace(name); n != nil {
		st.Namespace = *n
	}
	st.Usage = snap.NamespaceUsage(name)
	workloads, replicas := snap.WorkloadTally(name)
	st.Workloads, st.Replicas = int(workloads), replicas
	return st
}

func (s *API) handleListNamespaces(w http.ResponseWriter, r *http.Request) error {
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
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

func (s *API) handleGetNamespace(w http.ResponseWriter, r *http.Request) error {
	name, err := route.PathName(r, "name")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		if name != api.DefaultNamespace && snap.Namespace(name) == nil {
			return nil, 0, route.NotFound("namespace %q not found", name)
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
	return route.Invalid("invalid-namespace", f)
}

func (s *API) handleApplyNamespace(w http.ResponseWriter, r *http.Request) error {
	var n api.Namespace
	if err := route.DecodeJSON(w, r, "invalid-namespace", &n); err != nil {
		return err
	}
	if err := validateNamespace(&n); err != nil {
		return err
	}
	n.CreateIndex, n.ModifyIndex = 0, 0
	if _, err := s.propose(&fsm.UpsertNamespace{Namespace: &n}); err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, s.state().Snapshot().Namespace(n.Name))
	return nil
}

func (s *API) handleDeleteNamespace(w http.ResponseWriter, r *http.Request) error {
	name, err := route.PathName(r, "name")
	if err != nil {
		return err
	}
	snap := s.state().Snapshot()
	if snap.Namespace(name) == nil {
		return route.NotFound("namespace %q not found", name)
	}
	if n := len(snap.WorkloadsIn(nil, name)); n > 0 {
		return namespaceNotEmpty(name, n)
	}
	idx, err := s.propose(&fsm.DeleteNamespace{Name: name})
	if errors.Is(err, state.ErrNamespaceNotEmpty) { // a workload came meanwhile
		err = namespaceNotEmpty(name, len(s.state().Snapshot().WorkloadsIn(nil, name)))
	}
	if err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, map[string]any{"index": idx})
	return nil
}

func namespaceNotEmpty(name string, workloads int) error {
	return &route.Error{Status: http.StatusConflict, Code: "namespace-not-empty",
		Msg: "namespace " + name + " holds " + strconv.Itoa(workloads) + " workload(s); purge them first (strata stop --purge -n " + name + ")"}
}
