package server

import (
	"fmt"
	"net/http"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/disruption"
	"github.com/strata-dev/strata/internal/noderef"
	"github.com/strata-dev/strata/internal/state"
)

func (s *Server) handleListNodes(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	stub := q.boolean("stub") // a long list's lines (api.NodeStub)
	if err := q.err(); err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
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

func (s *Server) handleGetNode(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		n, err := findNodeIn(snap.NodesWatch(ws), id)
		if err != nil {
			return nil, 0, err
		}
		return n, snap.TableIndex(ws, state.TableNodes), nil
	})
}

// handleRegisterNode upserts a node as its agent fingerprinted it. A node
// that registers is alive: it gets a fresh heartbeat deadline.
func (s *Server) handleRegisterNode(w http.ResponseWriter, r *http.Request) {
	var n api.Node
	if err := decodeJSON(w, r, "invalid-node", &n); err != nil {
		s.fail(w, err)
		return
	}
	if err := validateNode(&n); err != nil {
		s.fail(w, err)
		return
	}
	snap := s.State().Snapshot()
	key, err := s.registrationKey(r, snap, &n)
	if err != nil {
		s.fail(w, err)
		return
	}
	if r.Header.Get(api.HeaderDefaultName) != "" {
		s.defaultNameMu.Lock()
		defer s.defaultNameMu.Unlock()
		if err := defaultNameTaken(s.State().Snapshot(), &n); err != nil {
			s.fail(w, err)
			return
		}
	}
	// Ready, or draining or quarantined: the store keeps an operator's
	// state across agent restarts (state.UpsertNode).
	n.Status, n.StatusReason = api.NodeReady, ""
	n.LastHeartbeat = s.cfg.Now()
	notices := n.AgentNotices
	n.AgentNotices = nil
	idx, err := s.propose(cmdUpsertNode, &upsertNodeCmd{Node: &n, Time: n.LastHeartbeat, Notices: notices, Key: key})
	if err != nil {
		s.fail(w, registrationError(n.ID, err))
		return
	}
	interval, ttl := s.beats.Reset(n.ID, s.cfg.Now())
	s.metrics.heartbeats.Inc()
	s.logger.Info("node registered", "node", n.ID, "name", n.Name, "cpu", n.Capacity.CPUMilli, "memory", n.Capacity.MemoryBytes)
	for _, text := range notices {
		s.logger.Warn("agent notice", "node", n.ID, "name", n.Name, "notice", text)
	}
	s.stampCell(w, s.State().Snapshot())
	writeJSON(w, http.StatusOK, api.HeartbeatResponse{Index: idx, HeartbeatTTL: ttl.String(), HeartbeatInterval: interval.String()})
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
		return &httpError{status: http.StatusConflict, code: api.CodeNodeNameTaken,
			msg: fmt.Sprintf("node name %q is taken by node %s (%s)", n.Name, other.ID, other.Status)}
	}
	return nil
}

// handleHeartbeat extends a node's deadline; a node that was down comes
// back ready. An unknown node is told so, and re-registers.
func (s *Server) handleHeartbeat(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	snap := s.State().Snapshot()
	if _, err := s.authenticateNode(r, snap, id); err != nil {
		s.fail(w, err)
		return
	}
	n := snap.Node(id)
	if !s.IsLeader() {
		s.fail(w, ErrNotLeader)
		return
	}
	if n.Status == api.NodeDown {
		// The node's workloads are evaluated at once: copies that stayed
		// unknown and were replaced meanwhile are resolved (one is
		// stopped) as soon as the node is back.
		snap := s.State().Snapshot()
		cmd := &nodeStatusCmd{NodeID: id, Status: api.NodeReady, Reason: "heartbeat resumed", Time: s.cfg.Now(),
			Evals: s.evalsForNode(snap.AllocsByNode(id), api.TriggerNodeReconnect, id)}
		if _, err := s.propose(cmdNodeStatus, cmd); err != nil {
			s.fail(w, err)
			return
		}
		s.logger.Info("node back", "node", id, "name", n.Name, "evals", len(cmd.Evals))
	}
	// The lease is renewed only once the node is ready again: a node that
	// comes back after its copies were replaced must not run them on a
	// lease granted before the server recorded its return.
	interval, ttl := s.beats.Reset(id, s.cfg.Now())
	s.metrics.heartbeats.Inc()
	s.stampCell(w, s.State().Snapshot())
	writeJSON(w, http.StatusOK, api.HeartbeatResponse{HeartbeatTTL: ttl.String(), HeartbeatInterval: interval.String(), Lease: ttl.String()})
}

// handleNodeAllocs is the agent's watch: the node's allocations that still
// need the agent (everything except finished ones that are also stopped).
func (s *Server) handleNodeAllocs(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	if _, err := s.authenticateNode(r, s.State().Snapshot(), id); err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		if snap.Node(id) == nil {
			// Not an empty list: an agent told "nothing" would stop
			// every task. It re-registers instead.
			return nil, 0, &httpError{status: http.StatusNotFound, code: "node-unknown", msg: "node " + id + " is not registered"}
		}
		out := agentAllocs{} // opened for the agent by serveBlocking
		for _, a := range snap.AllocsByNodeWatch(ws, id) {
			done := a.ClientStatus == api.AllocComplete || a.ClientStatus == api.AllocFailed
			if done && a.DesiredStatus == api.DesiredStop {
				continue
			}
			out = append(out, a)
		}
		s.stampCell(w, snap)
		return out, snap.TableIndex(ws, state.TableAllocs), nil
	})
}

// movesOn reports whether an agent's report that old now serves (runs,
// and is ready where its agent reports health: disruption.Serving) may let
// a move go on: old replaces an allocation that still runs (its
// predecessor can stop now), or its workload has allocations left on a
// draining node (a replica up frees disruption budget).
func (s *Server) movesOn(snap *state.Snapshot, old *api.Allocation, u *api.AllocUpdate) bool {
	after := *old
	after.ClientStatus, after.Health = u.ClientStatus, u.Health
	if disruption.Serving(old) || !disruption.Serving(&after) {
		return false
	}
	if prev := snap.Alloc(old.PreviousAlloc); prev != nil && prev.DesiredStatus == api.DesiredRun && !prev.Terminal() {
		return true
	}
	return s.drainer.wantsEval(qualified(old.Namespace, old.Workload))
}

// handleAllocUpdates applies agents' reports. An allocation that newly
// failed gets its workload re-evaluated so a replacement is placed.
func (s *Server) handleAllocUpdates(w http.ResponseWriter, r *http.Request) {
	var req allocUpdatesRequest
	if err := decodeJSON(w, r, "invalid-alloc-update", &req); err != nil {
		s.fail(w, err)
		return
	}
	if err := validateAllocUpdates(&req); err != nil {
		s.fail(w, err)
		return
	}
	snap := s.State().Snapshot()
	node, err := s.authenticateNode(r, snap, "")
	if err != nil {
		s.fail(w, err)
		return
	}
	// Every allocation reported must be the node's own: one that is not
	// refuses the whole report, before anything of it is applied.
	for i, u := range req.Updates {
		if old := snap.Alloc(u.ID); old != nil && old.NodeID != node {
			s.fail(w, &httpError{status: http.StatusForbidden, code: codeNodeAuth,
				msg:    fmt.Sprintf("updates[%d]: allocation %s runs on node %s, not on %s: an agent reports only its own node's allocations", i, u.ID, old.NodeID, node),
				fields: []api.FieldError{{Path: fmt.Sprintf("updates[%d].id", i), Message: "not an allocation of node " + node}}})
			return
		}
	}
	cmd := &allocClientUpdateCmd{Time: s.cfg.Now()}
	failed := map[workloadKey]bool{}
	var refused []api.RefusedUpdate
	for _, u := range req.Updates {
		old := snap.Alloc(u.ID)
		if old == nil {
			continue
		}
		if why := state.IllegalClientTransition(old.ClientStatus, u.ClientStatus); why != "" {
			refused = append(refused, api.RefusedUpdate{ID: u.ID, Reason: why})
			continue
		}
		cmd.Updates = append(cmd.Updates, u)
		if u.ClientStatus == api.AllocFailed && old.ClientStatus != api.AllocFailed && old.DesiredStatus == api.DesiredRun && !failed[keyOfAlloc(old)] {
			failed[keyOfAlloc(old)] = true
			cmd.Evals = append(cmd.Evals, s.newEval(old.Namespace, old.Workload, old.Priority, api.TriggerAllocFailed, old.NodeID))
		} else if deploymentWatches(snap, old, u) && !failed[keyOfAlloc(old)] {
			failed[keyOfAlloc(old)] = true // one evaluation per workload and report
			cmd.Evals = append(cmd.Evals, s.newEval(old.Namespace, old.Workload, old.Priority, api.TriggerDeployment, old.NodeID))
		}
		if s.movesOn(snap, old, u) && !failed[keyOfAlloc(old)] {
			failed[keyOfAlloc(old)] = true
			cmd.Evals = append(cmd.Evals, s.newEval(old.Namespace, old.Workload, old.Priority, api.TriggerNodeDrain, old.NodeID))
		}
	}
	if len(refused) > 0 {
		s.logger.Warn("agent report refused in part", "node", node, "refused", len(refused), "first", refused[0].ID, "reason", refused[0].Reason)
	}
	if len(cmd.Updates) == 0 {
		writeJSON(w, http.StatusOK, &api.AllocUpdatesResponse{Index: snap.Index(), Refused: refused})
		return
	}
	idx, err := s.propose(cmdAllocClientUpdate, cmd)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, &api.AllocUpdatesResponse{Index: idx, Refused: refused})
}
