package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/replica"
	"github.com/strata-dev/strata/internal/state"
)

// errStoreReplaced ends a blocking query whose store a snapshot restore
// replaced; the query is asked again of the new store.
var errStoreReplaced = errors.New("state store replaced")

// serveBlocking answers a read, blocking per ?index&wait. read returns the
// value and the index of the data it read, adding watches to ws. The value
// is sent in its public view (views.go).
func (s *API) serveBlocking(w http.ResponseWriter, r *http.Request, read func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error)) error {
	index, wait, err := route.BlockingParams(r)
	if err != nil {
		return err
	}
	if wait > 0 {
		s.cfg.HTTP.ExtendBy(w, wait) // the server's timeouts would cut the wait short
	}
	var out any
	var idx uint64
	for {
		replaced := s.fsm.Replaced()
		idx, err = s.state().Query(r.Context(), index, wait, func(snap *state.Snapshot, ws memdb.WatchSet) (uint64, error) {
			select {
			case <-replaced:
				return 0, errStoreReplaced
			default:
			}
			ws.Add(replaced)
			v, i, err := read(snap, ws)
			out = v
			return i, err
		})
		if !errors.Is(err, errStoreReplaced) {
			break
		}
		// A snapshot restore swapped the store: ask the new one.
	}
	if err != nil {
		if replica.LostLeadership(r.Context()) {
			return replica.ErrNotLeader
		}
		if r.Context().Err() != nil {
			return nil // the client went away
		}
		return err
	}
	if out, err = s.publicView(out); err != nil {
		return err
	}
	w.Header().Set(route.IndexHeader, strconv.FormatUint(max(idx, 1), 10))
	route.WriteJSON(w, http.StatusOK, out)
	return nil
}
