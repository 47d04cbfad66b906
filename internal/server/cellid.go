package server

import (
	"net/http"
	"strconv"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/state"
)

// A cell has an identity, made once by its first leader and replicated like
// any state (snapshots included). Every answer an agent acts on carries it,
// with the raft index this server has applied, so that an agent refuses
// desired state from another cell (a server started on an empty data dir
// bootstraps a new one) or from a server behind what it has already seen
// (invariant 7; docs/agent-safety.md).

// ensureCellID gives the cell its identity if it has none yet. It runs on a
// leader after the barrier, so a cell that has an identity shows it here;
// the id is made before proposing, never in Apply.
func (s *Server) ensureCellID() error {
	if s.State().Snapshot().CellID() != "" {
		return nil
	}
	id := newID()
	if _, err := s.propose(&fsm.SetCellID{ID: id, Time: s.cfg.Now()}); err != nil {
		return err
	}
	s.logger.Info("cell identity", "cell", s.State().Snapshot().CellID())
	return nil
}

// stampCell sets the cell headers (api.CellHeader, api.AppliedIndexHeader)
// of an answer an agent acts on. The applied index is raft's: it only grows,
// across restarts and operator snapshot restores, and on a server that is
// ready (readiness.go) every committed entry below it has been applied.
func (s *Server) stampCell(w http.ResponseWriter, snap *state.Snapshot) {
	w.Header().Set(api.CellHeader, snap.CellID())
	w.Header().Set(api.AppliedIndexHeader, strconv.FormatUint(s.raft.raft.AppliedIndex(), 10))
}
