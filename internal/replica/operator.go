package replica

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/httplimit"
)

// maxSnapshotBytes bounds an uploaded snapshot (it is spooled to disk).
const maxSnapshotBytes = 64 << 30

// snapshotTransfer bounds the upload or download of a snapshot file.
const snapshotTransfer = time.Hour

// Routes are the replica's own endpoints, for the API's table: this
// server's status (served before it is ready, for load balancers and
// operators), the raft configuration and the snapshots.
func (r *Replica) Routes() route.Group {
	return route.Group{
		{Pattern: "GET /v1/status/leader", Rule: route.Open, Local: true, Handle: r.handleLeader},
		{Pattern: "GET /v1/status/ready", Rule: route.Open, Local: true, Handle: r.handleReady},
		// This server's own view of the raft configuration, served even
		// before it is ready or when the cell has no leader (a lost quorum).
		{Pattern: "GET /v1/status/raft", Rule: route.Open, Local: true, Handle: r.handleRaftConfiguration},
		{Pattern: "GET /v1/operator/raft/configuration", Rule: route.CellRead, Handle: r.handleRaftConfiguration},
		{Pattern: "DELETE /v1/operator/raft/peer", Rule: route.CellManage, Handle: r.handleRemovePeer},
		{Pattern: "GET /v1/operator/snapshot", Rule: route.CellManage, Handle: r.handleSnapshotSave,
			Stream: func(*http.Request) bool { return true }},
		{Pattern: "PUT /v1/operator/snapshot", Rule: route.CellManage, Handle: r.handleSnapshotRestore, Upload: snapshotTransfer},
	}
}

func (r *Replica) handleLeader(w http.ResponseWriter, _ *http.Request) error {
	addr, id := r.raft.raft.LeaderWithID()
	route.WriteJSON(w, http.StatusOK, map[string]any{"leader": string(addr), "leaderId": string(id), "self": r.cfg.ID,
		"selfAddress": string(r.raft.addr()), "isLeader": r.IsLeader()})
	return nil
}

// handleReady says whether this server serves from its state: 200 when it
// does, 503 not-ready with the reason while it replays (a health check for
// load balancers and test harnesses).
func (r *Replica) handleReady(w http.ResponseWriter, _ *http.Request) error {
	if err := r.ready.local(); err != nil {
		return err
	}
	_, id := r.raft.raft.LeaderWithID()
	route.WriteJSON(w, http.StatusOK, map[string]any{"ready": true, "isLeader": r.IsLeader(), "leaderId": string(id),
		"appliedIndex": r.fsm.AppliedIndex()})
	return nil
}

// handleRaftConfiguration lists the cell's servers (served by the leader,
// or by any server with ?stale).
func (r *Replica) handleRaftConfiguration(w http.ResponseWriter, _ *http.Request) error {
	f := r.raft.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
	}
	_, leader := r.raft.raft.LeaderWithID()
	out := api.RaftConfiguration{Servers: []api.RaftServer{}, Index: f.Index()}
	for _, srv := range f.Configuration().Servers {
		out.Servers = append(out.Servers, api.RaftServer{ID: string(srv.ID), Address: string(srv.Address),
			Voter: srv.Suffrage == raft.Voter, Leader: srv.ID == leader})
	}
	route.WriteJSON(w, http.StatusOK, out)
	return nil
}

// handleRemovePeer removes a server from the raft configuration, named by
// ?id= or ?address=. It is for servers that are gone for good; one that is
// still running stays out until it restarts with --join.
func (r *Replica) handleRemovePeer(w http.ResponseWriter, req *http.Request) error {
	id, addr := req.URL.Query().Get("id"), req.URL.Query().Get("address")
	if (id == "") == (addr == "") {
		return route.BadRequest("give exactly one of id and address")
	}
	c, err := r.raft.configuration()
	if err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
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
		return route.NotFound("no server %s in the raft configuration; it has: %s", strings.TrimSpace(id+" "+addr), strings.Join(names, ", "))
	}
	if err := raftErr(r.raft.raft.RemoveServer(found.ID, 0, 30*time.Second).Error()); err != nil {
		return fmt.Errorf("remove %s: %w", found.ID, err)
	}
	r.logger.Warn("server removed from the cell", "id", found.ID, "raft", found.Address)
	route.WriteJSON(w, http.StatusOK, api.RemovePeerResponse{Removed: api.RaftServer{ID: string(found.ID), Address: string(found.Address), Voter: found.Suffrage == raft.Voter}})
	return nil
}

// handleSnapshotSave streams a consistent snapshot of the state: one
// snapshot of the FSM, taken after the leader confirmed it leads (or, with
// ?stale, of this server's state).
func (r *Replica) handleSnapshotSave(w http.ResponseWriter, _ *http.Request) error {
	snap := r.fsm.Snapshot()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set(route.IndexHeader, fmt.Sprint(max(snap.Index(), 1)))
	// As long as the client keeps reading: a large state takes a while.
	out := httplimit.Stream(w, r.cfg.HTTP.WithDefaults().WriteTimeout)
	if _, err := writeSnapshotFile(out, snap, r.cfg.DataDir, r.cfg.Now()); err != nil {
		// Headers may be gone already; the client's checksum catches a cut file.
		r.logger.Error("snapshot save", "err", err)
		return err
	}
	return nil
}

// handleSnapshotRestore replaces the cell's whole state with a snapshot
// file, through raft's user restore on the leader: the leader installs it
// and sends it to every follower. The file is checked completely first;
// a bad one is refused with 400 and changes nothing.
func (r *Replica) handleSnapshotRestore(w http.ResponseWriter, req *http.Request) error {
	httplimit.Extend(w, snapshotTransfer) // the API's read timeout would cut a large upload
	v, err := readSnapshotFile(http.MaxBytesReader(w, req.Body, maxSnapshotBytes), r.cfg.DataDir, r.fsm.Verify)
	if err != nil {
		if errors.Is(err, ErrBadSnapshot) {
			return &route.Error{Status: http.StatusBadRequest, Code: "bad-snapshot", Msg: err.Error()}
		}
		return err
	}
	defer v.Close()
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Index: v.header.Index, Size: v.header.PayloadBytes}
	if err := raftErr(r.raft.raft.Restore(meta, v.file, time.Minute)); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	r.logger.Warn("state restored from a snapshot", "snapshot_index", v.header.Index, "created", v.header.CreateTime)
	// The leader's loops hold the old state (queued evaluations, node
	// deadlines): a new term starts them on the restored one.
	r.leadership.restart(req.Context())
	route.WriteJSON(w, http.StatusOK, api.SnapshotInfo{Index: v.header.Index, Bytes: v.header.PayloadBytes, SHA256: v.header.PayloadSHA256})
	return nil
}
