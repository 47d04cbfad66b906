package server

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// commandEvents describes what a command is about to do, reading the state
// as it was before. It is part of the FSM, so it must be deterministic: it
// reads only the command and the state, and takes times from the command.
func commandEvents(snap *state.Snapshot, body any) []api.Event {
	var out []api.Event
	switch c := body.(type) {
	case *upsertWorkloadCmd:
		version := state.NextWorkloadVersion(snap.Workload(c.Workload.Namespace, c.Workload.Name))
		out = append(out, api.Event{Time: c.Workload.SubmitTime, Type: api.EventWorkloadRegistered, Namespace: api.NamespaceOf(c.Workload.Namespace), Workload: c.Workload.Name,
			Message: fmt.Sprintf("version %d submitted", version)})
	case *stopWorkloadCmd:
		t, msg := api.EventWorkloadStopped, "stopped"
		if c.Purge {
			t, msg = api.EventWorkloadPurged, "stopped and purged"
		}
		out = append(out, api.Event{Time: c.Time, Type: t, Namespace: api.NamespaceOf(c.Namespace), Workload: c.Name, Message: msg})
	case *upsertNodeCmd:
		if old := snap.Node(c.Node.ID); old == nil || old.Status == api.NodeDown {
			out = append(out, api.Event{Time: c.Time, Type: api.EventNodeRegistered, NodeID: c.Node.ID,
				Message: fmt.Sprintf("node %s registered", c.Node.Name)})
		}
		for _, n := range c.Notices {
			out = append(out, api.Event{Time: c.Time, Type: api.EventNodeAgent, NodeID: c.Node.ID,
				Message: fmt.Sprintf("node %s: %s", c.Node.Name, n)})
		}
	case *setCellIDCmd:
		if snap.CellID() == "" {
			out = append(out, api.Event{Time: c.Time, Type: api.EventCellCreated, Message: "cell " + c.ID + " created"})
		}
	case *nodeStatusCmd:
		t := api.EventNodeReady
		if c.Status == api.NodeDown {
			t = api.EventNodeDown
		}
		name := c.NodeID
		if n := snap.Node(c.NodeID); n != nil {
			name = n.Name
		}
		out = append(out, api.Event{Time: c.Time, Type: t, NodeID: c.NodeID, Message: fmt.Sprintf("node %s %s: %s", name, c.Status, c.Reason)})
	case *applyPlanCmd:
		out = append(out, planEvents(snap, c)...)
	case *migrateCmd:
		out = append(out, migrateEvents(snap, c)...)
	case *nodeOpCmd:
		out = append(out, nodeOpEvents(snap, c)...)
	case *setCellConfigCmd:
		out = append(out, api.Event{Time: c.Time, Type: api.EventCellConfig, Message: describeConfig(c.Config)})
	case *allocClientUpdateCmd:
		for _, u := range c.Updates {
			old := snap.Alloc(u.ID)
			if old != nil && old.ClientStatus != api.AllocLost {
				for _, e := range healthEvents(old, u) {
					e.Time = c.Time
					out = append(out, e)
				}
			}
			if old == nil || u.ClientStatus != api.AllocFailed || old.ClientStatus == api.AllocFailed {
				continue
			}
			out = append(out, api.Event{Time: c.Time, Type: api.EventAllocFailed, Namespace: old.Namespace, Workload: old.Workload, NodeID: old.NodeID,
				AllocID: old.ID, Message: fmt.Sprintf("%s[%d] on %s failed: %s", old.Group, old.Index, old.NodeName, u.ClientReason)})
		}
	}
	return append(out, deploymentEvents(snap, body)...)
}

// planEvents summarizes a plan per workload (placements in bulk, stops in
// bulk) and lists every preemption on its own: those are rare and matter.
func planEvents(snap *state.Snapshot, c *applyPlanCmd) []api.Event {
	var out []api.Event
	placed := map[string]int{}
	nodes := map[string]map[string]bool{}
	for _, a := range c.Place {
		k := qualified(a.Namespace, a.Workload)
		placed[k]++
		if nodes[k] == nil {
			nodes[k] = map[string]bool{}
		}
		nodes[k][a.NodeID] = true
	}
	part := ""
	if c.Parts > 1 {
		part = fmt.Sprintf(" (plan part %d of %d)", c.Part, c.Parts)
	}
	for _, k := range sortedKeys(placed) {
		ns, w := unqualified(k)
		out = append(out, api.Event{Time: c.Time, Type: api.EventPlaced, Namespace: ns, Workload: w,
			Message: fmt.Sprintf("placed %d allocation(s) on %d node(s)%s", placed[k], len(nodes[k]), part)})
	}
	stopped := map[string]int{}
	for _, st := range c.Stop {
		a := snap.Alloc(st.AllocID)
		if a == nil {
			continue
		}
		if st.PreemptedBy != "" {
			out = append(out, api.Event{Time: c.Time, Type: api.EventPreempted, Namespace: a.Namespace, Workload: a.Workload, NodeID: a.NodeID, AllocID: a.ID,
				Message: fmt.Sprintf("%s[%d] (priority %d) on %s %s", a.Group, a.Index, a.Priority, a.NodeName, st.Reason)})
			continue
		}
		if a.ClientStatus == api.AllocFailed {
			out = append(out, api.Event{Time: c.Time, Type: api.EventNotRescheduled, Namespace: a.Namespace, Workload: a.Workload, NodeID: a.NodeID, AllocID: a.ID,
				Message: fmt.Sprintf("%s[%d] on %s failed and is not replaced: %s", a.Group, a.Index, a.NodeName, st.Reason)})
			continue
		}
		stopped[qualified(a.Namespace, a.Workload)+"\x00"+st.Reason]++
	}
	for _, e := range c.Evals {
		if e.TriggeredBy == api.TriggerFollowUp && !e.WaitUntil.IsZero() {
			out = append(out, api.Event{Time: c.Time, Type: api.EventFollowUp, Namespace: e.Namespace, Workload: e.Workload,
				Message: fmt.Sprintf("evaluating again at %s (%s from now): a delayed replacement or the end of an unknown allocation's grace",
					e.WaitUntil.UTC().Format(time.RFC3339), e.WaitUntil.Sub(c.Time).Round(time.Millisecond))})
		}
	}
	for _, k := range sortedKeys(stopped) {
		q, reason, _ := strings.Cut(k, "\x00")
		ns, w := unqualified(q)
		out = append(out, api.Event{Time: c.Time, Type: api.EventStopped, Namespace: ns, Workload: w,
			Message: fmt.Sprintf("stopping %d allocation(s): %s%s", stopped[k], reason, part)})
	}
	if e := c.Eval; e != nil && e.Status == api.EvalBlocked {
		for _, f := range e.Failures {
			out = append(out, api.Event{Time: c.Time, Type: api.EventUnplaceable, Namespace: e.Namespace, Workload: e.Workload,
				Message: fmt.Sprintf("group %s: %d not placed: %s", f.Group, f.Missing, f.Summary)})
		}
	}
	return out
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

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

// describeConfig words a cell configuration for the event list.
func describeConfig(c *api.CellConfig) string {
	policy := c.SchedulingPolicy
	if policy == "" {
		policy = api.PolicyBinpack
	}
	msg := "cell configuration set: default policy " + policy
	if names := c.WindowNames(); len(names) > 0 {
		msg += ", time windows " + strings.Join(names, ", ")
	}
	return msg
}
