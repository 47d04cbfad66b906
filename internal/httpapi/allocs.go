package httpapi

import (
	"net/http"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

func (s *API) handleListAllocs(w http.ResponseWriter, r *http.Request) error {
	q := route.NewQuery(r)
	workload := q.Checked("workload", spec.CheckName)
	ns := q.Namespace()
	stub := q.Boolean("stub") // a long list's lines, in columns (api.AllocationTable)
	if err := q.Err(); err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		var out []*api.Allocation
		if workload != "" {
			out = snap.AllocsByWorkloadWatch(ws, ns, workload)
			if out == nil && snap.Workload(ns, workload) == nil {
				return nil, 0, route.NotFound("workload %q not found in namespace %q", workload, ns)
			}
		} else {
			for _, a := range snap.Allocs(ws) {
				if api.NamespaceOf(a.Namespace) == ns {
					out = append(out, a)
				}
			}
		}
		out = snap.Current(out) // never a purged predecessor's beside its successor's
		if stub {
			return allocTable(out), snap.TableIndex(ws, state.TableAllocs), nil
		}
		if out == nil {
			out = []*api.Allocation{}
		}
		return redactAllocs(out), snap.TableIndex(ws, state.TableAllocs), nil
	})
}

// allocTable is the lines of a long list: no spec, so nothing to redact.
func allocTable(allocs []*api.Allocation) api.AllocationTable {
	out := api.AllocationTable{Stubs: make([]api.AllocationStub, len(allocs))}
	for i, a := range allocs {
		out.Stubs[i] = a.Stub()
	}
	return out
}

// findAlloc resolves an allocation id or a unique prefix of one, among
// namespace ns's allocations.
func findAlloc(snap *state.Snapshot, ns, id string) (*api.Allocation, error) {
	if a := snap.Alloc(id); a != nil && api.NamespaceOf(a.Namespace) == ns {
		return a, nil
	}
	if id == "" {
		return nil, route.NotFound("allocation id is empty")
	}
	var matches []*api.Allocation
	for _, a := range snap.AllocsByIDPrefix(id) {
		if api.NamespaceOf(a.Namespace) == ns {
			matches = append(matches, a)
		}
	}
	switch len(matches) {
	case 0:
		return nil, route.NotFound("allocation %q not found in namespace %q", id, ns)
	case 1:
		return matches[0], nil
	}
	return nil, route.BadRequest("allocation prefix %q is ambiguous: %d allocations match", id, len(matches))
}

func (s *API) handleGetAlloc(w http.ResponseWriter, r *http.Request) error {
	id, ns, err := idInNamespace(r, "id")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		a, err := findAlloc(snap, ns, id)
		if err != nil {
			return nil, 0, err
		}
		return redactAlloc(a), snap.TableIndex(ws, state.TableAllocs), nil
	})
}
