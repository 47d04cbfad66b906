package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/noderef"
	"github.com/strata-dev/strata/internal/replica"
	"github.com/strata-dev/strata/internal/state"
)

func (s *API) handleListNodes(w http.ResponseWriter, r *http.Request) error {
	q := route.NewQuery(r)
	stub := q.Boolean("stub") // a long list's lines (api.NodeStub)
	if err := q.Err(); err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		out := snap.NodesWatch(ws)
		if stub {
			stubs := make(api.NodeStubs, len(out))
			for i, n := range out {
				stubs[i] = n.Stub()
			}
			return stubs, snap.TableIndex(ws, state.TableNodes), nil
		}
		if out == nil {
			out = []*api.Node{}
		}
		return out, snap.TableIndex(ws, state.TableNodes), nil
	})
}

func (s *API) handleGetNode(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		n, err := findNodeIn(snap.NodesWatch(ws), id)
		if err != nil {
			return nil, 0, err
		}
		return n, snap.TableIndex(ws, state.TableNodes), nil
	})
}

// handleRegisterNode upserts a node as its agent fingerprinted it. A node
// that registers is alive: it gets a fresh heartbeat deadline.
func (s *API) handleRegisterNode(w http.ResponseWriter, r *http.Request) error {
	var n api.Node
	if err := route.DecodeJSON(w, r, "invalid-node", &n); err != nil {
		return err
	}
	if err := validateNode(&n); err != nil {
		return err
	}
	if err := s.checkAgentScheme(n.HTTPAddr); err != nil {
		return err
	}
	snap := s.state().Snapshot()
	key, err := s.registrationKey(r, snap, &n)
	if err != nil {
		return err
	}
	if r.Header.Get(api.HeaderDefaultName) != "" {
		s.defaultNameMu.Lock()
		defer s.defaultNameMu.Unlock()
		if err := defaultNameTaken(s.state().Snapshot(), &n); err != nil {
			return err
		}
	}
	// Ready, or draining or quarantined: the store keeps an operator's
	// state across agent restarts (state.UpsertNode).
	n.Status, n.StatusReason = api.NodeReady, ""
	n.LastHeartbeat = s.cfg.Now()
	notices := n.AgentNotices
	n.AgentNotices = nil
	idx, err := s.propose(&fsm.UpsertNode{Node: &n, Time: n.LastHeartbeat, Notices: notices, Key: key})
	if err != nil {
		return registrationError(n.ID, err)
	}
	interval, ttl := s.leader.Heartbeat(n.ID, s.cfg.Now())
	s.logger.Info("node registered", "node", n.ID, "name", n.Name, "cpu", n.Capacity.CPUMilli, "memory", n.Capacity.MemoryBytes)
	for _, text := range notices {
		s.logger.Warn("agent notice", "node", n.ID, "name", n.Name, "notice", text)
	}
	s.stampCell(w, s.state().Snapshot())
	route.WriteJSON(w, http.StatusOK, api.HeartbeatResponse{Index: idx, HeartbeatTTL: ttl.String(), HeartbeatInterval: interval.String()})
	return nil
}

// defaultNameTaken refuses a node new to the cell whose agent chose its
// name by default (api.HeaderDefaultName) when another node has that name:
// the agent then registers under a name of its own. A name given on
// purpose is kept; commands that name it refuse and list the nodes.
func defaultNameTaken(snap *state.Snapshot, n *api.Node) error {
	if snap.NodeKey(n.ID) != nil {
		return nil
	}
	if other := noderef.NameHolder(snap.Nodes(), n.Name, n.ID); other != nil {
		return route.Conflict(api.CodeNodeNameTaken, "node name %q is taken by node %s (%s)", n.Name, other.ID, other.Status)
	}
	return nil
}

// handleHeartbeat extends a node's deadline; a node that was down comes
// back ready. An unknown node is told so, and re-registers.
func (s *API) handleHeartbeat(w http.ResponseWriter, r *http.Request) error {
	id := nodeOf(r)
	n := s.state().Snapshot().Node(id)
	if n == nil {
		return nodeUnknown(id, false) // purged since its credentials were checked
	}
	if !s.replica.IsLeader() {
		return replica.ErrNotLeader
	}
	if n.Status == api.NodeDown {
		// The node's workloads are evaluated at once: copies that stayed
		// unknown and were replaced meanwhile are resolved (one is
		// stopped) as soon as the node is back.
		cmd := s.make.NodeBack(s.state().Snapshot(), id)
		if _, err := s.propose(cmd); err != nil {
			return err
		}
		s.logger.Info("node back", "node", id, "name", n.Name, "evals", len(cmd.Evals))
	}
	// The lease is renewed only once the node is ready again: a node that
	// comes back after its copies were replaced must not run them on a
	// lease granted before the server recorded its return.
	interval, ttl := s.leader.Heartbeat(id, s.cfg.Now())
	s.stampCell(w, s.state().Snapshot())
	route.WriteJSON(w, http.StatusOK, api.HeartbeatResponse{HeartbeatTTL: ttl.String(), HeartbeatInterval: interval.String(), Lease: ttl.String()})
	return nil
}

// handleNodeAllocs is the agent's watch: the node's allocations that still
// need the agent (everything except finished ones that are also stopped).
func (s *API) handleNodeAllocs(w http.ResponseWriter, r *http.Request) error {
	id := nodeOf(r)
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		if snap.Node(id) == nil {
			// Not an empty list: an agent told "nothing" would stop
			// every task. It re-registers instead.
			return nil, 0, &route.Error{Status: http.StatusNotFound, Code: "node-unknown", Msg: "node " + id + " is not registered"}
		}
		out := agentAllocs{} // opened for the agent by serveBlocking
		for _, a := range snap.AllocsByNodeWatch(ws, id) {
			done := a.ClientStatus == api.AllocComplete || a.ClientStatus == api.AllocFailed
			if done && a.DesiredStatus == api.DesiredStop {
				continue
			}
			out = append(out, withRootPolicy(snap, a))
		}
		s.stampCell(w, snap)
		return out, snap.TableIndex(ws, state.TableAllocs), nil
	})
}

// handleAllocUpdates applies agents' reports. An allocation that newly
// failed gets its workload re-evaluated so a replacement is placed.
func (s *API) handleAllocUpdates(w http.ResponseWriter, r *http.Request) error {
	var req allocUpdatesRequest
	if err := route.DecodeJSON(w, r, "invalid-alloc-update", &req); err != nil {
		return err
	}
	if err := validateAllocUpdates(&req); err != nil {
		return err
	}
	snap := s.state().Snapshot()
	node := nodeOf(r)
	// Every allocation reported must be the node's own: one that is not
	// refuses the whole report, before anything of it is applied.
	for i, u := range req.Updates {
		if old := snap.Alloc(u.ID); old != nil && old.NodeID != node {
			return &route.Error{Status: http.StatusForbidden, Code: codeNodeAuth,
				Msg:    fmt.Sprintf("updates[%d]: allocation %s runs on node %s, not on %s: an agent reports only its own node's allocations", i, u.ID, old.NodeID, node),
				Fields: []api.FieldError{{Path: fmt.Sprintf("updates[%d].id", i), Message: "not an allocation of node " + node}}}
		}
	}
	// Which evaluations the reports cause (a failure, a deployment, a
	// drain moving on) is trigger's.
	cmd, refused := s.make.Reports(snap, req.Updates, s.leader.DrainWants)
	if len(refused) > 0 {
		s.logger.Warn("agent report refused in part", "node", node, "refused", len(refused), "first", refused[0].ID, "reason", refused[0].Reason)
	}
	if cmd == nil {
		route.WriteJSON(w, http.StatusOK, &api.AllocUpdatesResponse{Index: snap.Index(), Refused: refused})
		return nil
	}
	idx, err := s.propose(cmd)
	if err != nil {
		return err
	}
	route.WriteJSON(w, http.StatusOK, &api.AllocUpdatesResponse{Index: idx, Refused: refused})
	return nil
}

// stampCell sets the cell headers (api.CellHeader, api.AppliedIndexHeader)
// of an answer an agent acts on, so that an agent refuses desired state
// from another cell (a server started on an empty data dir bootstraps a
// new one) or from a server behind what it has already seen (invariant 7;
// docs/agent-safety.md). The applied index is raft's: it only grows,
// across restarts and operator snapshot restores, and on a server that is
// ready every committed entry below it has been applied.
func (s *API) stampCell(w http.ResponseWriter, snap *state.Snapshot) {
	w.Header().Set(api.CellHeader, snap.CellID())
	w.Header().Set(api.AppliedIndexHeader, strconv.FormatUint(s.replica.AppliedIndex(), 10))
}
