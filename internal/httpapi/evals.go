package httpapi

import (
	"errors"
	"net/http"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/state"
)

func (s *API) handleListEvals(w http.ResponseWriter, r *http.Request) error {
	ns, err := namespaceOf(r)
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		out := []*api.Evaluation{}
		for _, e := range snap.CurrentEvals(snap.Evals(ws)) { // a purged workload's leave the listing
			if api.NamespaceOf(e.Namespace) == ns {
				out = append(out, e)
			}
		}
		return out, snap.TableIndex(ws, state.TableEvals), nil
	})
}

func (s *API) handleGetEval(w http.ResponseWriter, r *http.Request) error {
	id, ns, err := idInNamespace(r, "id")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		e, err := findEval(snap, ns, id)
		if err != nil {
			return nil, 0, err
		}
		return e, snap.TableIndex(ws, state.TableEvals), nil
	})
}

// handleRetryEval runs a failed evaluation again (its scheduling panicked,
// and the scheduler was fixed since): it is stored pending, and the
// leader's broker takes it. Only a failed evaluation is retried.
func (s *API) handleRetryEval(w http.ResponseWriter, r *http.Request) error {
	id, ns, err := idInNamespace(r, "id")
	if err != nil {
		return err
	}
	e, err := findEval(s.state().Snapshot(), ns, id)
	if err != nil {
		return err
	}
	retry := *e
	retry.Status, retry.StatusDescription = api.EvalPending, ""
	idx, err := s.propose(&fsm.RetryEval{Eval: &retry, Time: s.cfg.Now()})
	if errors.Is(err, fsm.ErrNotFailed) {
		return route.Conflict("not-failed", "evaluation %s is %s: only a failed evaluation is retried", e.ID, e.Status)
	}
	if err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, map[string]any{"evalId": e.ID, "index": idx})
	return nil
}

// findEval resolves an evaluation id or a unique prefix of one, among
// namespace ns's evaluations.
func findEval(snap *state.Snapshot, ns, id string) (*api.Evaluation, error) {
	if e := snap.Eval(id); e != nil && api.NamespaceOf(e.Namespace) == ns {
		return e, nil
	}
	var m []*api.Evaluation
	for _, e := range snap.EvalsByIDPrefix(id) {
		if api.NamespaceOf(e.Namespace) == ns {
			m = append(m, e)
		}
	}
	switch {
	case len(m) == 1:
		return m[0], nil
	case len(m) > 1:
		return nil, route.BadRequest("evaluation prefix %q is ambiguous: %d evaluations match", id, len(m))
	}
	return nil, route.NotFound("evaluation %q not found in namespace %q", id, ns)
}
