package api

import (
	"context"
	"net/url"
	"time"
)

// Incident statuses.
const (
	IncidentOpen   = "open"
	IncidentClosed = "closed"
)

// Incident is trouble of the cell grouped by what it shares, with its
// probable cause (docs/incidents.md). The leader correlates the cell's
// events into incidents and keeps them in memory: a new leader derives
// them again from the events it holds.
type Incident struct {
	// ID is the time of its first signal and its first cause
	// ("20250105T120000-rack-r3"), kept when it widens or absorbs others.
	ID     string `json:"id"`
	Status string `json:"status"`
	// Summary says it in one line: "12 allocations on 3 nodes of rack r7
	// failed within 40 s: rack r7".
	Summary string `json:"summary"`
	// Cause is the probable cause; Alternatives the next best when it
	// opened.
	Cause        IncidentCause   `json:"cause"`
	Alternatives []IncidentCause `json:"alternatives,omitempty"`
	// Began and Last are the times of its first and latest signal; Closed
	// when it closed (zero while open).
	Began  time.Time `json:"began"`
	Last   time.Time `json:"last"`
	Closed time.Time `json:"closed,omitempty"`
	// MergedInto names the incident that absorbed it.
	MergedInto string `json:"mergedInto,omitempty"`
	// Signals counts the trouble that joined it, Kinds per kind (failed,
	// oom-killed, restarted, check-failing, unhealthy, lost, node-down,
	// slow-placement); Allocations, Nodes and Workloads the distinct ones
	// (lower bounds past a thousand).
	Signals     int            `json:"signals"`
	Kinds       map[string]int `json:"kinds"`
	Allocations int            `json:"allocations"`
	Nodes       int            `json:"nodes"`
	Workloads   int            `json:"workloads"`
	// Events are the IDs of its first events.
	Events []string `json:"events,omitempty"`
	// History says how it changed: opened, widened, merged, closed.
	History []string `json:"history,omitempty"`
}

// IncidentCause is a candidate cause with its evidence.
type IncidentCause struct {
	// Key and Value name it (rack r7: "rack", "r7"); Noun is how the key
	// reads.
	Key   string `json:"key"`
	Value string `json:"value"`
	Noun  string `json:"noun"`
	// Infra: a part of the machine room (node, rack, power zone, switch…).
	Infra bool `json:"infra"`
	// Support of Of troubled subjects (Unit: allocation, node, placement)
	// share it; it holds Share of the cell's, Lift times over-represented.
	Unit    string  `json:"unit"`
	Support int     `json:"support"`
	Of      int     `json:"of"`
	Share   float64 `json:"share"`
	Lift    float64 `json:"lift"`
	// P is the corrected p-value in words ("3.1e-19": it may be below the
	// smallest float); Evidence the whole in a sentence.
	P        string `json:"p"`
	Evidence string `json:"evidence"`
}

// Incidents lists the leader's incidents, open ones first (newest first),
// then the closed ones it keeps; status filters (open or closed).
func (c *Client) Incidents(ctx context.Context, status string) ([]*Incident, error) {
	var out []*Incident
	path := "/v1/incidents"
	if status != "" {
		path += "?status=" + url.QueryEscape(status)
	}
	_, err := c.get(ctx, path, nil, &out)
	return out, err
}

// Incident returns one incident.
func (c *Client) Incident(ctx context.Context, id string) (*Incident, error) {
	var out Incident
	_, err := c.get(ctx, "/v1/incidents/"+url.PathEscape(id), nil, &out)
	return &out, err
}
