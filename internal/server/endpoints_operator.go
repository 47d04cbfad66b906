package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httplimit"
)

// maxSnapshotBytes bounds an uploaded snapshot (it is spooled to disk).
const maxSnapshotBytes = 64 << 30

// handleRaftConfiguration lists the cell's servers (served by the leader,
// or by any server with ?stale).
func (s *Server) handleRaftConfiguration(w http.ResponseWriter, r *http.Request) {
	f := s.raft.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		s.fail(w, fmt.Errorf("read raft configuration: %w", err))
		return
	}
	_, leader := s.raft.raft.LeaderWithID()
	out := api.RaftConfiguration{Servers: []api.RaftServer{}, Index: f.Index()}
	for _, srv := range f.Configuration().Servers {
		out.Servers = append(out.Servers, api.RaftServer{ID: string(srv.ID), Address: string(srv.Address),
			Voter: srv.Suffrage == raft.Voter, Leader: srv.ID == leader})
	}
	writeJSON(w, http.StatusOK, out)
}

// handleRemovePeer removes a server from the raft configuration, named by
// ?id= or ?address=. It is for servers that are gone for good; one that is
// still running stays out until it restarts with --join.
func (s *Server) handleRemovePeer(w http.ResponseWriter, r *http.Request) {
	id, addr := r.URL.Query().Get("id"), r.URL.Query().Get("address")
	if (id == "") == (addr == "") {
		s.fail(w, badRequest("give exactly one of id and address"))
		return
	}
	c, err := s.raft.configuration()
	if err != nil {
		s.fail(w, fmt.Errorf("read raft configuration: %w", err))
		return
	}
	var found *raft.Server
	var names []string
	for i, srv := range c.Servers {
		names = append(names, fmt.Sprintf("%s (%s)", srv.ID, srv.Address))
		if (id != "" && string(srv.ID) == id) || (addr != "" && string(srv.Address) == addr) {
			found = &c.Servers[i]
		}
	}
	if found == nil {
		s.fail(w, notFound("no server %s in the raft configuration; it has: %s", strings.TrimSpace(id+" "+addr), strings.Join(names, ", ")))
		return
	}
	if err := raftErr(s.raft.raft.RemoveServer(found.ID, 0, 30*time.Second).Error()); err != nil {
		s.fail(w, fmt.Errorf("remove %s: %w", found.ID, err))
		return
	}
	s.logger.Warn("server removed from the cell", "id", found.ID, "raft", found.Address)
	writeJSON(w, http.StatusOK, api.RemovePeerResponse{Removed: api.RaftServer{ID: string(found.ID), Address: string(found.Address), Voter: found.Suffrage == raft.Voter}})
}

// handleSnapshotSave streams a consistent snapshot of the state store: one
// MVCC snapshot, taken after the leader confirmed it leads (or, with
// ?stale, of this server's state).
func (s *Server) handleSnapshotSave(w http.ResponseWriter, r *http.Request) {
	snap := s.fsm.Snapshot()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set(indexHeader, fmt.Sprint(max(snap.Index(), 1)))
	// As long as the client keeps reading: a large state takes a while.
	out := httplimit.Stream(w, s.cfg.HTTP.WithDefaults().WriteTimeout)
	if _, err := writeSnapshotFile(out, snap, s.cfg.DataDir, s.cfg.Now()); err != nil {
		// Headers may be gone already; the client's checksum catches a cut file.
		s.logger.Error("snapshot save", "err", err)
		s.fail(w, err)
	}
}

// handleSnapshotRestore replaces the cell's whole state with a snapshot
// file, through raft's user restore on the leader: the leader installs it
// and sends it to every follower. The file is checked completely first;
// a bad one is refused with 400 and changes nothing.
func (s *Server) handleSnapshotRestore(w http.ResponseWriter, r *http.Request) {
	httplimit.Extend(w, snapshotTransfer) // the API's read timeout would cut a large upload
	v, err := readSnapshotFile(http.MaxBytesReader(w, r.Body, maxSnapshotBytes), s.cfg.DataDir, s.fsm.Verify)
	if err != nil {
		if errors.Is(err, ErrBadSnapshot) {
			writeError(w, http.StatusBadRequest, "bad-snapshot", err.Error())
			return
		}
		s.fail(w, err)
		return
	}
	defer v.Close()
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Index: v.header.Index, Size: v.header.PayloadBytes}
	if err := raftErr(s.raft.raft.Restore(meta, v.file, time.Minute)); err != nil {
		s.fail(w, fmt.Errorf("restore snapshot: %w", err))
		return
	}
	s.logger.Warn("state restored from a snapshot", "snapshot_index", v.header.Index, "created", v.header.CreateTime)
	// The leader's loops hold the old state (queued evaluations, node
	// deadlines): start them again on the restored one.
	s.revokeLeadership()
	s.establishLeadership()
	writeJSON(w, http.StatusOK, api.SnapshotInfo{Index: v.header.Index, Bytes: v.header.PayloadBytes, SHA256: v.header.PayloadSHA256})
}
