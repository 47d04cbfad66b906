package api

import (
	"context"
	"net/url"
	"time"
)

// AuditEntry records one write to the API, allowed or refused: who made
// it, what it was, when, from where, and what came of it.
type AuditEntry struct {
	ID    string    `json:"id"`
	Index uint64    `json:"index"` // the raft index that stored the entry
	Time  time.Time `json:"time"`
	// Who is "token <accessor> (<name>)", "node <id>", or "anonymous"
	// (with what it claimed, if anything).
	Who       string `json:"who"`
	Accessor  string `json:"accessor,omitempty"`
	TokenName string `json:"tokenName,omitempty"`
	Node      string `json:"node,omitempty"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	From      string `json:"from"`
	Status    int    `json:"status"`
	// Result is "ok", or the error code of a refused or failed request.
	Result string `json:"result"`
	// Unproven marks a refused request whose caller proved no identity
	// (no valid token, no node's secret): such entries are kept apart from
	// the rest, in a smaller bound of their own, so that anyone who can
	// reach the API cannot push the authenticated history out.
	Unproven bool `json:"unproven,omitempty"`
	// Count is how many alike requests the entry stands for (0: one):
	// unproven refusals of one source, request and result are aggregated,
	// from Time to Until.
	Count int       `json:"count,omitempty"`
	Until time.Time `json:"until,omitzero"`
}

// Audit lists the audit log, oldest first: entries at or after since
// (zero: all kept), of who when set (an accessor, a token name or a node
// id).
func (c *Client) Audit(ctx context.Context, since time.Time, who string) ([]*AuditEntry, error) {
	v := url.Values{}
	if !since.IsZero() {
		v.Set("since", since.UTC().Format(time.RFC3339Nano))
	}
	if who != "" {
		v.Set("who", who)
	}
	var out []*AuditEntry
	path := "/v1/audit"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	_, err := c.get(ctx, path, nil, &out)
	return out, err
}
