package leader

import (
	"maps"
	"slices"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/incident"
)

// Incidents lists the incidents this leader holds: the open ones, newest
// first, then the closed ones it keeps, newest first; status ("open",
// "closed") keeps one kind. Empty on a server that does not lead.
func (l *Leader) Incidents(status string) []*api.Incident {
	c := l.correlation
	c.mu.Lock()
	open, closed := c.engine.Open(), c.engine.Closed()
	c.mu.Unlock()
	var out []*api.Incident
	if status != api.IncidentClosed {
		for _, in := range slices.Backward(open) {
			out = append(out, apiIncident(in))
		}
	}
	if status != api.IncidentOpen {
		for _, in := range slices.Backward(closed) {
			out = append(out, apiIncident(in))
		}
	}
	return out
}

// Incident returns one incident this leader holds.
func (l *Leader) Incident(id string) (*api.Incident, bool) {
	c := l.correlation
	c.mu.Lock()
	in, ok := c.engine.Get(id)
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	return apiIncident(in), true
}

// IncidentOf names the incident an event is part of ("" when none, or
// this server does not lead).
func (l *Leader) IncidentOf(eventID string) string {
	c := l.correlation
	c.mu.Lock()
	defer c.mu.Unlock()
	id, _ := c.engine.IncidentOf(eventID)
	return id
}

func apiIncident(in incident.Incident) *api.Incident {
	out := &api.Incident{
		ID: in.ID, Status: api.IncidentOpen, Summary: in.Summary(), Cause: apiCause(in.Cause),
		Began: in.Began, Last: in.Last, Closed: in.Closed, MergedInto: in.MergedInto,
		Signals: in.Signals, Kinds: map[string]int{}, Allocations: in.Subjects[incident.UnitAlloc],
		Nodes: in.Nodes, Workloads: in.Workloads, Events: slices.Clone(in.Refs), History: slices.Clone(in.History),
	}
	if !in.Open() {
		out.Status = api.IncidentClosed
	}
	for _, k := range slices.Sorted(maps.Keys(in.Kinds)) {
		out.Kinds[string(k)] = in.Kinds[k]
	}
	for _, a := range in.Alternatives {
		out.Alternatives = append(out.Alternatives, apiCause(a))
	}
	return out
}

func apiCause(c incident.Cause) api.IncidentCause {
	return api.IncidentCause{
		Key: c.Key, Value: c.Value, Noun: c.Noun, Infra: c.Infra, Unit: string(c.Unit),
		Support: c.Support, Of: c.Of, Share: c.Share, Lift: c.Lift, P: c.P(), Evidence: c.Evidence(),
	}
}
