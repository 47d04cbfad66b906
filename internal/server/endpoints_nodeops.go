package server

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/noderef"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// maxQuarantineReason bounds the reason an operator gives a quarantine.
const maxQuarantineReason = 256

func nodeConflict(format string, args ...any) error {
	return &httpError{status: http.StatusConflict, code: "node-state", msg: fmt.Sprintf(format, args...)}
}

// findNode resolves what a request names a node by: its id, a unique
// prefix of it, or its name (internal/noderef). A reference several nodes
// match is refused with the candidates, never resolved to one of them.
func findNode(snap *state.Snapshot, ref string) (*api.Node, error) {
	if n := snap.Node(ref); n != nil {
		return n, nil
	}
	return findNodeIn(snap.Nodes(), ref)
}

// findNodeIn is findNode among nodes (a blocking query's watched list).
func findNodeIn(nodes []*api.Node, ref string) (*api.Node, error) {
	n, err := noderef.Resolve(nodes, ref)
	var amb *noderef.AmbiguousError
	switch {
	case err == nil:
		return n, nil
	case errors.As(err, &amb):
		return nil, &httpError{status: http.StatusBadRequest, code: "ambiguous", msg: err.Error()}
	}
	return nil, notFound("%v", err)
}

// parseDrainDeadline reads a drain's deadline (a Go duration, empty the
// default) into the time it ends, from now.
func parseDrainDeadline(field, text string, now time.Time) (time.Time, error) {
	d := api.DefaultDrainDeadline
	if text != "" {
		var err error
		if d, err = time.ParseDuration(text); err != nil {
			return time.Time{}, invalid("invalid-node-op", []api.FieldError{{Path: field, Message: fmt.Sprintf("not a duration (like 30m or 2h): %q", text)}})
		}
	}
	if d <= 0 || d > spec.MaxDuration {
		return time.Time{}, invalid("invalid-node-op", []api.FieldError{{Path: field, Message: fmt.Sprintf("must be more than 0 and at most %s, got %s", spec.MaxDuration, d)}})
	}
	return now.Add(d), nil
}

// nodeOp runs one node operation: build makes the command from the node
// as the leader sees it (or refuses), and the answer is the node as the
// command left it.
func (s *Server) nodeOp(w http.ResponseWriter, r *http.Request, body any, build func(snap *state.Snapshot, n *api.Node, now time.Time) (*nodeOpCmd, error)) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	if body != nil {
		if err := decodeJSON(w, r, "invalid-node-op", body); err != nil {
			s.fail(w, err)
			return
		}
	}
	snap := s.State().Snapshot()
	n, err := findNode(snap, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	now := s.cfg.Now()
	cmd, err := build(snap, n, now)
	if err != nil {
		s.fail(w, err)
		return
	}
	cmd.NodeID, cmd.Time = n.ID, now
	lost := 0
	if cmd.Op == nodeOpPurge {
		for _, a := range snap.AllocsByNode(n.ID) {
			if !a.Terminal() {
				lost++
			}
		}
	}
	idx, err := s.propose(cmdNodeOp, cmd)
	if err != nil {
		s.fail(w, err)
		return
	}
	if cmd.Op == nodeOpPurge {
		s.beats.Forget(n.ID)
	}
	s.logger.Info("node operation", "op", cmd.Op, "node", n.ID, "name", n.Name, "evals", len(cmd.Evals))
	writeJSON(w, http.StatusOK, &api.NodeOpResponse{Index: idx, Node: s.State().Snapshot().Node(n.ID), Lost: lost})
}

func (s *Server) handleNodeEligibility(w http.ResponseWriter, r *http.Request) {
	var req api.EligibilityRequest
	s.nodeOp(w, r, &req, func(_ *state.Snapshot, n *api.Node, _ time.Time) (*nodeOpCmd, error) {
		if !req.Eligible {
			return &nodeOpCmd{Op: nodeOpDisable}, nil
		}
		switch {
		case n.Quarantine != nil:
			return nil, nodeConflict("node %s is quarantined (%s): lift the quarantine instead (strata node quarantine %s --lift)", n.Name, n.Quarantine.Reason, n.Name)
		case n.Drain != nil:
			return nil, nodeConflict("node %s is draining: cancel the drain first (strata node drain %s --cancel)", n.Name, n.Name)
		}
		return &nodeOpCmd{Op: nodeOpEnable}, nil
	})
}

func (s *Server) handleNodeDrain(w http.ResponseWriter, r *http.Request) {
	var req api.DrainRequest
	s.nodeOp(w, r, &req, func(snap *state.Snapshot, n *api.Node, now time.Time) (*nodeOpCmd, error) {
		if n.Quarantine != nil {
			return nil, nodeConflict("node %s is quarantined, which drains it: lift the quarantine to change that", n.Name)
		}
		if req.Cancel {
			if req.Deadline != "" || req.KeepSystem {
				return nil, invalid("invalid-node-op", []api.FieldError{{Path: "cancel", Message: "a cancel takes no deadline or keepSystem"}})
			}
			if n.Drain == nil {
				return nil, nodeConflict("node %s is not draining", n.Name)
			}
			return &nodeOpCmd{Op: nodeOpDrainCancel}, nil
		}
		deadline, err := parseDrainDeadline("deadline", req.Deadline, now)
		if err != nil {
			return nil, err
		}
		return &nodeOpCmd{Op: nodeOpDrain, Drain: &api.DrainSpec{StartedAt: now, Deadline: deadline, KeepSystem: req.KeepSystem},
			Evals: s.evalsForNode(snap.AllocsByNode(n.ID), api.TriggerNodeDrain, n.ID)}, nil
	})
}

func (s *Server) handleNodeQuarantine(w http.ResponseWriter, r *http.Request) {
	var req api.QuarantineRequest
	s.nodeOp(w, r, &req, func(snap *state.Snapshot, n *api.Node, now time.Time) (*nodeOpCmd, error) {
		if req.Lift {
			if req.Reason != "" || req.Deadline != "" {
				return nil, invalid("invalid-node-op", []api.FieldError{{Path: "lift", Message: "a lift takes no reason or deadline"}})
			}
			if n.Quarantine == nil {
				return nil, nodeConflict("node %s is not quarantined", n.Name)
			}
			return &nodeOpCmd{Op: nodeOpLift}, nil
		}
		reason := strings.TrimSpace(req.Reason)
		switch {
		case reason == "":
			return nil, invalid("invalid-node-op", []api.FieldError{{Path: "reason", Message: "required: say why the node is quarantined"}})
		case len(reason) > maxQuarantineReason:
			return nil, invalid("invalid-node-op", []api.FieldError{{Path: "reason", Message: fmt.Sprintf("at most %d bytes, got %d", maxQuarantineReason, len(reason))}})
		}
		deadline, err := parseDrainDeadline("deadline", req.Deadline, now)
		if err != nil {
			return nil, err
		}
		return &nodeOpCmd{Op: nodeOpQuarantine, Quarantine: &api.Quarantine{Reason: reason, Since: now},
			Drain: &api.DrainSpec{StartedAt: now, Deadline: deadline},
			Evals: s.evalsForNode(snap.AllocsByNode(n.ID), api.TriggerNodeDrain, n.ID)}, nil
	})
}

func (s *Server) handleNodePurge(w http.ResponseWriter, r *http.Request) {
	s.nodeOp(w, r, nil, func(snap *state.Snapshot, n *api.Node, _ time.Time) (*nodeOpCmd, error) {
		if n.Alive() {
			return nil, nodeConflict("node %s is %s: purge is for dead nodes; drain it, stop its agent, and purge it once it is marked down", n.Name, n.Status)
		}
		return &nodeOpCmd{Op: nodeOpPurge, Evals: s.evalsForNode(snap.AllocsByNode(n.ID), api.TriggerNodePurged, n.ID)}, nil
	})
}

// handleNodeStatus is `strata node status NODE`: the node, what still runs
// on it, and what a drain has left to move.
func (s *Server) handleNodeStatus(w http.ResponseWriter, r *http.Request) {
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
		out := &api.NodeStatus{Node: n, Allocations: []*api.Allocation{}}
		for _, a := range snap.AllocsByNodeWatch(ws, n.ID) {
			if !a.Terminal() {
				out.Allocations = append(out.Allocations, a)
			}
		}
		sort.Slice(out.Allocations, func(i, j int) bool { return out.Allocations[i].ID < out.Allocations[j].ID })
		if n.Drain != nil {
			out.Remaining = moveable(snap, n.ID, n.Drain)
		}
		return out, max(snap.TableIndex(ws, state.TableNodes), snap.TableIndex(ws, state.TableAllocs)), nil
	})
}
