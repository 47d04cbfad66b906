package httpapi

import (
	"net/http"

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
		return out, snap.TableIndex(ws, state.TableEvents), nil
	})
}
