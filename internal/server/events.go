package server

import (
	"net/http"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

func (s *Server) handleListEvents(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	workload := q.checked("workload", spec.CheckName)
	ns := q.namespace()
	if err := q.err(); err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		out := snap.Events(ws, ns, workload)
		if workload != "" && out == nil && snap.Workload(ns, workload) == nil {
			return nil, 0, notFound("workload %q not found and no events name it", workload)
		}
		if out == nil {
			out = []*api.Event{}
		}
		return out, snap.TableIndex(ws, state.TableEvents), nil
	})
}
