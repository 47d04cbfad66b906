package httpapi

import (
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
)

// Unproven refusals (docs/security.md, "The audit log"). A refused request
// whose caller proved no identity — no valid token, no node's secret —
// costs its sender nothing, and 10,100 of them in 2.6 s once pushed every
// entry of the 10,000-entry log out (issue 18, defect 8). So they never
// reach the log one by one: they are aggregated per window, one entry per
// caller, source, request and result with a count; a window keeps at most
// refusalKeys such entries and folds the rest into one; and the store
// bounds them apart from the rest (state.MaxAuditUnproven), so they only
// ever push out older unproven refusals. At most refusalKeys+1 entries a
// window reach raft, however fast they come.

const (
	// refusalWindow is how long unproven refusals are aggregated before
	// their entries are committed.
	refusalWindow = time.Second
	// refusalKeys bounds the distinct entries of one window.
	refusalKeys = 64
)

// refusalKey is what makes two unproven refusals alike.
type refusalKey struct {
	who, from, method, path, result string
	status                          int
}

// refusals aggregates the unproven refusals of the current window. Its
// lock is a leaf, held only to count.
type refusals struct {
	mu    sync.Mutex
	byKey map[refusalKey]*api.AuditEntry
	order []*api.AuditEntry // in order of first arrival
	rest  *api.AuditEntry   // the window's refusals past refusalKeys entries
}

// add counts e, an unproven refusal, in the window.
func (r *refusals) add(e *api.AuditEntry) {
	k := refusalKey{who: e.Who, from: e.From, method: e.Method, path: e.Path, result: e.Result, status: e.Status}
	r.mu.Lock()
	defer r.mu.Unlock()
	if agg := r.byKey[k]; agg != nil {
		agg.Count++
		agg.Until = e.Time
		return
	}
	if len(r.order) >= refusalKeys {
		if r.rest == nil {
			r.rest = &api.AuditEntry{Time: e.Time, Who: "anonymous", From: "*", Method: "*", Path: "*", Result: "(various)", Unproven: true}
		}
		r.rest.Count++
		r.rest.Until = e.Time
		return
	}
	if r.byKey == nil {
		r.byKey = map[refusalKey]*api.AuditEntry{}
	}
	c := *e
	c.Unproven, c.Count = true, 1
	r.byKey[k] = &c
	r.order = append(r.order, &c)
}

// take returns the window's entries and starts a new window.
func (r *refusals) take() []*api.AuditEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.order
	if r.rest != nil {
		out = append(out, r.rest)
	}
	for _, e := range out {
		if e.Count == 1 {
			e.Count, e.Until = 0, time.Time{} // one request: an ordinary entry
		}
	}
	r.byKey, r.order, r.rest = nil, nil, nil
	return out
}
