package httpapi

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// handleListEvents serves the cell's history as its caller may read it:
// the events of the request's namespace (the route's rule checked read
// there), and the cell's own — nodes, the cell's configuration, which
// name no workload — only to a caller with read on the cell.
func (s *API) handleListEvents(w http.ResponseWriter, r *http.Request) error {
	q := route.NewQuery(r)
	workload := q.Checked("workload", spec.CheckName)
	ns := q.Namespace()
	if err := q.Err(); err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		all := snap.Events(ws, ns, workload)
		if workload != "" && all == nil && snap.Workload(ns, workload) == nil {
			return nil, 0, route.NotFound("workload %q not found and no events name it", workload)
		}
		out := []*api.Event{}
		cell := s.may(r, snap, route.CellRead, "")
		for _, e := range all {
			if e.Workload != "" || cell {
				out = append(out, e)
			}
		}
		return s.withIncidents(out), snap.TableIndex(ws, state.TableEvents), nil
	})
}

// withIncidents names, on copies of the events, the incident the leader
// correlated each into (the stored events are left as they are).
func (s *API) withIncidents(events []*api.Event) []*api.Event {
	out, copied := events, false
	for i, e := range events {
		id := s.leader.IncidentOf(e.ID)
		if id == "" || id == e.Incident {
			continue
		}
		if !copied {
			out, copied = slices.Clone(events), true
		}
		c := *e
		c.Incident = id
		out[i] = &c
	}
	return out
}

func (s *API) handleListIncidents(w http.ResponseWriter, r *http.Request) error {
	status := r.URL.Query().Get("status")
	switch status {
	case "", api.IncidentOpen, api.IncidentClosed:
	default:
		return route.Invalid("invalid-query", []api.FieldError{{Path: "status", Message: fmt.Sprintf("want %s or %s, got %q", api.IncidentOpen, api.IncidentClosed, status)}})
	}
	out := s.leader.Incidents(status)
	if out == nil {
		out = []*api.Incident{}
	}
	route.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *API) handleGetIncident(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	in, ok := s.leader.Incident(id)
	if !ok {
		return route.NotFound("incident %q not found: the leader keeps the open incidents and the last closed ones (strata incidents lists them)", id)
	}
	route.WriteJSON(w, http.StatusOK, in)
	return nil
}
