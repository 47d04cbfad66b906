package leader

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/incident"
	"github.com/strata-dev/strata/internal/state"
)

// correlation is the leader's incidents loop (docs/incidents.md). Every
// IncidentInterval it turns what the cell recorded since the last pass —
// its events, and restarts, OOM kills and lost allocations read from the
// allocations — into signals, feeds them to the incident engine, steps it,
// and records what opened, widened, merged or closed as events
// (fsm.RecordEvents). The same pass runs the rollout guard of every
// deployment under way (guards.go), which asks the engine before it
// blames a version: both read the same signals, and the guard must see
// the incidents of the very pass it judges in.
//
// Incidents are soft state (invariant 10): a new leader replays the
// events the state holds into a fresh engine in its first pass, and
// records only the changes no stored event tells already (an incident's
// events are worded from the incident alone, so the same change reads the
// same).
type correlation struct {
	l *Leader

	mu     sync.Mutex // everything below; the API reads beside the loop
	engine *incident.Engine
	guards map[string]*deploymentGuard
	seen   map[string]taskSeen // allocations' tasks as the last pass saw them
	// lastEvent is the ID of the newest event read (IDs sort by raft index
	// and then by their order in the entry: one entry writes many);
	// censusAt is when the census was last counted.
	lastEvent string
	censusAt  time.Time
	// allocsIndex is the allocations table's index at the last pass;
	// allocsSeen how many allocations the state held when seen was last
	// pruned of the collected ones.
	allocsIndex uint64
	allocsSeen  int
	// allocs is how many allocations the state held at the last pass that
	// read them, censusAllocs how many at the last census.
	allocs, censusAllocs int
}

// censusEvery is how often the population causes are judged against is
// counted again while the cell is calm: counting reads every allocation;
// censusFresh is the oldest census trouble is judged against.
const (
	censusEvery = time.Minute
	censusFresh = 15 * time.Second
)

func abs(n int) int { return max(n, -n) }

func newCorrelation(l *Leader) *correlation {
	c := &correlation{l: l}
	c.begin()
	return c
}

// begin forgets the last term: the first pass replays the stored events.
func (c *correlation) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.engine = incident.New(c.l.cfg.Incidents)
	c.guards, c.seen = map[string]*deploymentGuard{}, map[string]taskSeen{}
	c.lastEvent, c.censusAt, c.allocsIndex, c.allocsSeen = "", time.Time{}, 0, 0
	c.allocs, c.censusAllocs = 0, 0
}

// step runs one pass and proposes what it decided: the events of the
// incidents' changes, and the halts of bad rollouts.
func (c *correlation) step(context.Context) error {
	cmds := c.pass()
	var failed []error
	for _, cmd := range cmds {
		if _, err := c.l.propose(cmd); err != nil {
			failed = append(failed, err)
		}
	}
	return errors.Join(failed...)
}

// pass reads the state once and returns the commands to propose; it holds
// the lock, never across a proposal.
func (c *correlation) pass() []any {
	l := c.l
	now := l.cfg.Now()
	snap := l.state().Snapshot()
	d := newDescriber(snap)
	c.mu.Lock()
	defer c.mu.Unlock()
	var sigs []incident.Signal
	told := map[string]bool{} // the incident events stored, by message
	for _, e := range snap.Events(nil, "", "") {
		if e.Type == api.EventIncident {
			told[e.Message] = true
		}
		if e.ID <= c.lastEvent {
			continue
		}
		c.lastEvent = e.ID
		if s, ok := d.eventSignal(e); ok {
			sigs = append(sigs, s)
		}
	}
	// Restarts and losses have no events: the allocations that changed
	// since the last pass are read for them (none, in a calm cell).
	if idx := snap.TableIndex(nil, state.TableAllocs); idx != c.allocsIndex {
		c.allocs = 0
		for _, a := range snap.Allocs(nil) {
			c.allocs++
			if a.ModifyIndex <= c.allocsIndex && c.allocsIndex != 0 {
				continue
			}
			seen := seenOf(a)
			if was, ok := c.seen[a.ID]; ok {
				sigs = append(sigs, d.changeSignals(a, was, seen, restartedAt(a, now))...)
			}
			c.seen[a.ID] = seen
		}
		c.allocsIndex = idx
		if len(c.seen) > 2*max(1024, c.allocsSeen) {
			c.forgetCollected(snap)
		}
	}
	// The census is counted again every censusEvery; sooner when the
	// cell's allocations grew or shrank by a tenth since (one that just
	// filled); and when there is trouble to judge against a census older
	// than censusFresh.
	age := now.Sub(c.censusAt)
	moved := c.allocs > 0 && abs(c.allocs-c.censusAllocs) > c.censusAllocs/10
	if c.censusAt.IsZero() || age >= censusEvery || moved || (len(sigs) > 0 && age >= censusFresh) {
		c.engine.SetCensus(d.census(now.Add(-c.l.cfg.Incidents.WithDefaults().Window)))
		c.censusAt, c.censusAllocs = now, c.allocs
	}
	// Step the engine along the signals' own times, so that a pass that
	// reads minutes of events (the first of a term) opens and closes
	// incidents when they would have.
	var changes []incident.Change
	var stepped time.Time
	for _, s := range sigs {
		if !stepped.IsZero() && s.Time.Sub(stepped) >= l.cfg.IncidentInterval {
			changes = append(changes, c.engine.Step(s.Time)...)
			stepped = s.Time
		}
		if stepped.IsZero() {
			stepped = s.Time
		}
		if _, err := c.engine.Observe(s); err != nil {
			l.logger.Warn("incidents: a signal refused", "err", err) // a bug in signals.go
		}
	}
	changes = append(changes, c.engine.Step(now)...)
	cmds := c.judgeRollouts(snap, d, sigs, now)
	var events []api.Event
	for _, e := range incidentEvents(changes) {
		if !told[e.Message] {
			events = append(events, e)
		}
	}
	for len(events) > 0 {
		n := min(len(events), fsm.MaxRecordedEvents)
		cmds = append(cmds, &fsm.RecordEvents{Events: events[:n]})
		events = events[n:]
	}
	return cmds
}

// forgetCollected drops what seen holds of allocations the state no longer
// has (collected), so that it stays the size of the cell.
func (c *correlation) forgetCollected(snap *state.Snapshot) {
	for id := range c.seen {
		if snap.Alloc(id) == nil {
			delete(c.seen, id)
		}
	}
	c.allocsSeen = len(c.seen)
}

// restartedAt is when an allocation's tasks last started: a restart's
// signal is dated then, so that the rollout guard weighs it against the
// run it ended.
func restartedAt(a *api.Allocation, now time.Time) time.Time {
	var at time.Time
	for _, ts := range a.TaskStates {
		if ts != nil && ts.StartedAt.After(at) {
			at = ts.StartedAt
		}
	}
	if at.IsZero() || at.After(now) {
		return now
	}
	return at
}

// incidentEvents words the changes worth an event: an incident opened,
// widened, merged or closed (growth shows in the incident itself).
func incidentEvents(changes []incident.Change) []api.Event {
	var out []api.Event
	for _, ch := range changes {
		in := ch.Incident
		var msg string
		switch ch.Kind {
		case incident.Opened:
			msg = fmt.Sprintf("incident %s opened: %s", in.ID, in.Summary())
		case incident.Widened, incident.Merged:
			msg = fmt.Sprintf("incident %s %s: %s", in.ID, ch.Kind, ch.Detail)
		case incident.Closed:
			if in.MergedInto != "" {
				continue // its merge said it
			}
			msg = fmt.Sprintf("incident %s closed (%s): %s", in.ID, ch.Detail, in.Summary())
		default:
			continue
		}
		e := api.Event{Time: in.Last, Type: api.EventIncident, Incident: in.ID, Message: msg}
		if ch.Kind == incident.Closed && !in.Closed.IsZero() {
			e.Time = in.Closed
		}
		// An incident of one workload's version is that namespace's to
		// read; an infrastructure one is the cell's, named by its domain.
		if ns, name, ok := workloadOfCause(in.Cause); ok {
			e.Namespace, e.Workload = ns, name
		}
		out = append(out, e)
	}
	return out
}

// workloadOfCause is the workload a cause names ("ns/web" or
// "ns/web@v2"), if it names one.
func workloadOfCause(c incident.Cause) (ns, name string, ok bool) {
	switch c.Key {
	case incident.KeyWorkload, incident.KeyVersion:
		q, _, _ := strings.Cut(c.Value, "@")
		ns, name, ok = strings.Cut(q, "/")
		return ns, name, ok
	}
	return "", "", false
}
