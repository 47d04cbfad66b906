package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/noderef"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// maxQuarantineReason bounds the reason an operator gives a quarantine.
const maxQuarantineReason = 256

func nodeConflict(format string, args ...any) error {
	return route.Conflict("node-state", format, args...)
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
		return nil, &route.Error{Status: http.StatusBadRequest, Code: "ambiguous", Msg: err.Error()}
	}
	return nil, route.NotFound("%v", err)
}

// parseDrainDeadline reads a drain's deadline (a Go duration, empty the
// default) into the time it ends, from now.
func parseDrainDeadline(field, text string, now time.Time) (time.Time, error) {
	d := api.DefaultDrainDeadline
	if text != "" {
		var err error
		if d, err = time.ParseDuration(text); err != nil {
			return time.Time{}, route.Invalid("invalid-node-op", []api.FieldError{{Path: field, Message: fmt.Sprintf("not a duration (like 30m or 2h): %q", text)}})
		}
	}
	if d <= 0 || d > spec.MaxDuration {
		return time.Time{}, route.Invalid("invalid-node-op", []api.FieldError{{Path: field, Message: fmt.Sprintf("must be more than 0 and at most %s, got %s", spec.MaxDuration, d)}})
	}
	return now.Add(d), nil
}

// nodeOp runs one node operation: build makes the command from the node
// as the leader sees it (or refuses), and the answer is the node as the
// command left it.
// The evaluations the operation causes are trigger's (Maker.NodeOp).
func (s *API) nodeOp(w http.ResponseWriter, r *http.Request, body any, build func(snap *state.Snapshot, n *api.Node, now time.Time) (*fsm.NodeOp, error)) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	if body != nil {
		if err := route.DecodeJSON(w, r, "invalid-node-op", body); err != nil {
			return err
		}
	}
	snap := s.state().Snapshot()
	n, err := findNode(snap, id)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	cmd, err := build(snap, n, now)
	if err != nil {
		return err
	}
	cmd.NodeID, cmd.Time = n.ID, now
	s.make.NodeOp(snap, cmd)
	lost := 0
	if cmd.Op == fsm.NodeOpPurge {
		for _, a := range snap.AllocsByNode(n.ID) {
			if !a.Terminal() {
				lost++
			}
		}
	}
	idx, err := s.propose(cmd)
	if err != nil {
		return err
	}
	if cmd.Op == fsm.NodeOpPurge {
		s.leader.Forget(n.ID)
	}
	s.logger.Info("node operation", "op", cmd.Op, "node", n.ID, "name", n.Name, "evals", len(cmd.Evals))
	route.WriteJSON(w, http.StatusOK, &api.NodeOpResponse{Index: idx, Node: s.state().Snapshot().Node(n.ID), Lost: lost})
	return nil
}

func (s *API) handleNodeEligibility(w http.ResponseWriter, r *http.Request) error {
	var req api.EligibilityRequest
	return s.nodeOp(w, r, &req, func(_ *state.Snapshot, n *api.Node, _ time.Time) (*fsm.NodeOp, error) {
		if !req.Eligible {
			return &fsm.NodeOp{Op: fsm.NodeOpDisable}, nil
		}
		switch {
		case n.Quarantine != nil:
			return nil, nodeConflict("node %s is quarantined (%s): lift the quarantine instead (strata node quarantine %s --lift)", n.Name, n.Quarantine.Reason, n.Name)
		case n.Drain != nil:
			return nil, nodeConflict("node %s is draining: cancel the drain first (strata node drain %s --cancel)", n.Name, n.Name)
		}
		return &fsm.NodeOp{Op: fsm.NodeOpEnable}, nil
	})
}

func (s *API) handleNodeDrain(w http.ResponseWriter, r *http.Request) error {
	var req api.DrainRequest
	return s.nodeOp(w, r, &req, func(snap *state.Snapshot, n *api.Node, now time.Time) (*fsm.NodeOp, error) {
		if n.Quarantine != nil {
			return nil, nodeConflict("node %s is quarantined, which drains it: lift the quarantine to change that", n.Name)
		}
		if req.Cancel {
			if req.Deadline != "" || req.KeepSystem {
				return nil, route.Invalid("invalid-node-op", []api.FieldError{{Path: "cancel", Message: "a cancel takes no deadline or keepSystem"}})
			}
			if n.Drain == nil {
				return nil, nodeConflict("node %s is not draining", n.Name)
			}
			return &fsm.NodeOp{Op: fsm.NodeOpDrainCancel}, nil
		}
		deadline, err := parseDrainDeadline("deadline", req.Deadline, now)
		if err != nil {
			return nil, err
		}
		return &fsm.NodeOp{Op: fsm.NodeOpDrain, Drain: &api.DrainSpec{StartedAt: now, Deadline: deadline, KeepSystem: req.KeepSystem}}, nil
	})
}

func (s *API) handleNodeQuarantine(w http.ResponseWriter, r *http.Request) error {
	var req api.QuarantineRequest
	return s.nodeOp(w, r, &req, func(snap *state.Snapshot, n *api.Node, now time.Time) (*fsm.NodeOp, error) {
		if req.Lift {
			if req.Reason != "" || req.Deadline != "" {
				return nil, route.Invalid("invalid-node-op", []api.FieldError{{Path: "lift", Message: "a lift takes no reason or deadline"}})
			}
			if n.Quarantine == nil {
				return nil, nodeConflict("node %s is not quarantined", n.Name)
			}
			return &fsm.NodeOp{Op: fsm.NodeOpLift}, nil
		}
		reason := strings.TrimSpace(req.Reason)
		switch {
		case reason == "":
			return nil, route.Invalid("invalid-node-op", []api.FieldError{{Path: "reason", Message: "required: say why the node is quarantined"}})
		case len(reason) > maxQuarantineReason:
			return nil, route.Invalid("invalid-node-op", []api.FieldError{{Path: "reason", Message: fmt.Sprintf("at most %d bytes, got %d", maxQuarantineReason, len(reason))}})
		}
		deadline, err := parseDrainDeadline("deadline", req.Deadline, now)
		if err != nil {
			return nil, err
		}
		return &fsm.NodeOp{Op: fsm.NodeOpQuarantine, Quarantine: &api.Quarantine{Reason: reason, Since: now},
			Drain: &api.DrainSpec{StartedAt: now, Deadline: deadline}}, nil
	})
}

func (s *API) handleNodePurge(w http.ResponseWriter, r *http.Request) error {
	return s.nodeOp(w, r, nil, func(snap *state.Snapshot, n *api.Node, _ time.Time) (*fsm.NodeOp, error) {
		if n.Alive() {
			return nil, nodeConflict("node %s is %s: purge is for dead nodes; drain it, stop its agent, and purge it once it is marked down", n.Name, n.Status)
		}
		return &fsm.NodeOp{Op: fsm.NodeOpPurge}, nil
	})
}

// handleNodeStatus is `strata node status NODE`: the node, what still runs
// on it, and what a drain has left to move.
func (s *API) handleNodeStatus(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
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
			out.Remaining = fsm.DrainRemaining(snap, n.ID, n.Drain)
		}
		return out, max(snap.TableIndex(ws, state.TableNodes), snap.TableIndex(ws, state.TableAllocs)), nil
	})
}
