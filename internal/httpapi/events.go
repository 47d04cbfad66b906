package httpapi

import (
	"net/http"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

func (s *API) handleListEvents(w http.ResponseWriter, r *http.Request) error {
	q := route.NewQuery(r)
	workload := q.Checked("workload", spec.CheckName)
	ns := q.Namespace()
	if err := q.Err(); err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		out := snap.Events(ws, ns, workload)
		if workload != "" && out == nil && snap.Workload(ns, workload) == nil {
			return nil, 0, route.NotFound("workload %q not found and no events name it", workload)
		}
		if out == nil {
			out = []*api.Event{}
		}
		return out, snap.TableIndex(ws, state.TableEvents), nil
	})
}
