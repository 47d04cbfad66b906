package incident

import (
	"fmt"
	"slices"
	"time"
)

// ChangeKind is what happened to an incident in a Step.
type ChangeKind string

// The changes a Step reports, each one an event for the caller.
const (
	Opened  ChangeKind = "opened"
	Grew    ChangeKind = "grew"    // signals joined since the last step
	Widened ChangeKind = "widened" // a wider cause explains it and new trouble
	Merged  ChangeKind = "merged"  // incidents of one wider domain became one
	Closed  ChangeKind = "closed"
)

// Change is one incident's change, with a copy of the incident after it.
type Change struct {
	Kind     ChangeKind
	Incident Incident
	// Detail says what changed ("rack r7 → power zone pz2"), or why it
	// closed.
	Detail string
}

// maxRounds bounds the causes one Step may find: a step never runs away,
// and what it leaves is found in the next.
const maxRounds = 64

// Engine groups signals into incidents. It is not safe for concurrent use.
type Engine struct {
	policy  Policy
	census  *Census
	pending []Signal // unexplained signals, oldest first
	dropped int

	open   []*Incident // oldest first
	closed []*Incident // oldest first, at most MaxClosed
	byID   map[string]*Incident
	grown  map[*Incident]bool

	links     map[string]string // signal reference → incident ID
	linkOrder []string
}

// New returns an engine with an empty census.
func New(p Policy) *Engine {
	return &Engine{
		policy: p.WithDefaults(), census: NewCensus(),
		byID: map[string]*Incident{}, grown: map[*Incident]bool{}, links: map[string]string{},
	}
}

// SetCensus replaces the population causes are judged against. The engine
// keeps c and reads it in later steps; the caller must not change it.
func (e *Engine) SetCensus(c *Census) {
	if c == nil {
		c = NewCensus()
	}
	e.census = c
}

// Observe takes one signal. A signal that carries the cause of an open
// incident joins it at once (its ID is returned); any other waits, up to
// Window, for a Step to find it company.
func (e *Engine) Observe(s Signal) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	if in := e.joinable(s); in != nil {
		e.join(in, s)
		return in.ID, nil
	}
	e.pending = append(e.pending, s)
	if over := len(e.pending) - e.policy.MaxPending; over > 0 {
		e.pending = slices.Delete(e.pending, 0, over)
		e.dropped += over
	}
	return "", nil
}

// joinable is the open incident s belongs to: of those whose cause s
// carries, the narrowest (smallest share), then the oldest.
func (e *Engine) joinable(s Signal) *Incident {
	var best *Incident
	for _, in := range e.open {
		if s.has(in.Cause.Attr) && (best == nil || in.Cause.Share < best.Cause.Share) {
			best = in
		}
	}
	return best
}

func (e *Engine) join(in *Incident, s Signal) {
	in.add(s, e.policy)
	e.grown[in] = true
	e.link(s.Ref, in.ID)
}

func (e *Engine) link(ref, id string) {
	if ref == "" {
		return
	}
	if _, ok := e.links[ref]; !ok {
		e.linkOrder = append(e.linkOrder, ref)
		if over := len(e.linkOrder) - e.policy.MaxLinks; over > 0 {
			for _, old := range e.linkOrder[:over] {
				delete(e.links, old)
			}
			e.linkOrder = slices.Delete(e.linkOrder, 0, over)
		}
	}
	e.links[ref] = id
}

// Step moves the engine to now: it closes incidents quiet for Quiet, drops
// signals that waited Window in vain, finds the causes the waiting signals
// share (opening or widening incidents), merges incidents of one wider
// domain, and reports every change.
func (e *Engine) Step(now time.Time) []Change {
	var changes []Change
	for _, in := range slices.Clone(e.open) {
		if now.Sub(in.Last) >= e.policy.Quiet {
			changes = append(changes, e.close(in, now, "quiet for "+span(e.policy.Quiet)))
		}
	}
	e.pending = slices.DeleteFunc(e.pending, func(s Signal) bool {
		if now.Sub(s.Time) > e.policy.Window {
			e.dropped++
			return true
		}
		return false
	})
	for range maxRounds {
		found := e.discover()
		if len(found) == 0 {
			break
		}
		changes = append(changes, found...)
	}
	for range maxRounds {
		c, ok := e.mergeDomains()
		if !ok {
			break
		}
		changes = append(changes, c)
	}
	for _, in := range e.open {
		if e.grown[in] {
			changes = append(changes, Change{Kind: Grew, Incident: in.Snapshot()})
		}
	}
	clear(e.grown)
	return changes
}

// discover finds the best cause among the waiting signals and opens an
// incident for it, or widens the open incidents it contains; nothing when
// no cause is admissible.
func (e *Engine) discover() []Change {
	var admissible []Cause
	for _, c := range candidates(e.pending, e.census, e.policy) {
		if c.admissible(e.policy) {
			admissible = append(admissible, c)
		}
	}
	if len(admissible) == 0 {
		return nil
	}
	best := admissible[0]
	matched := e.takePending(best.Attr)
	var nested []*Incident
	for _, in := range e.open {
		if in.carries(best.Attr) {
			nested = append(nested, in)
		}
	}
	if len(nested) > 0 {
		target := nested[0]
		detail := fmt.Sprintf("%s → %s: %s", target.Cause, best, best.Evidence())
		e.absorbAll(target, nested[1:], best, matched)
		return []Change{{Kind: Widened, Incident: target.Snapshot(), Detail: detail}}
	}
	var alternatives []Cause
	for _, c := range admissible[1:] {
		if len(alternatives) == 3 {
			break
		}
		alternatives = append(alternatives, c)
	}
	in := newIncident(best, alternatives)
	for _, s := range matched {
		in.add(s, e.policy)
	}
	in.ID = e.uniqueID(incidentID(in.Began, best))
	in.History = append(in.History, fmt.Sprintf("opened: %s", best.Evidence()))
	for _, s := range matched {
		e.link(s.Ref, in.ID)
	}
	var changes []Change
	if len(e.open) >= e.policy.MaxOpen {
		stalest := e.open[0]
		for _, o := range e.open {
			if o.Last.Before(stalest.Last) {
				stalest = o
			}
		}
		changes = append(changes, e.close(stalest, in.Last, fmt.Sprintf("more than %d incidents open", e.policy.MaxOpen)))
	}
	e.open = append(e.open, in)
	e.byID[in.ID] = in
	return append(changes, Change{Kind: Opened, Incident: in.Snapshot()})
}

// mergeDomains looks for a wider infrastructure domain that two or more
// open infrastructure incidents share (two racks of one power zone) and
// that is itself improbable for the troubled nodes: k of the n nodes
// troubled by infrastructure incidents or still unexplained lie in it,
// against its share of the cell's nodes. The best such domain merges them
// (and the waiting signals in it) into the oldest.
func (e *Engine) mergeDomains() (Change, bool) {
	var infra []*Incident
	for _, in := range e.open {
		if in.Cause.Infra {
			infra = append(infra, in)
		}
	}
	if len(infra) < 2 {
		return Change{}, false
	}
	troubled := map[string]bool{}
	for _, in := range infra {
		for n := range in.nodes {
			troubled[n] = true
		}
	}
	for _, s := range e.pending {
		if n := s.attr(KeyNode); n != "" {
			troubled[n] = true
		}
	}
	groups := map[Attr][]*Incident{}
	var values []Attr
	for _, in := range infra {
		for _, a := range in.common {
			key, ok := e.policy.key(a.Key)
			if !ok || !key.Infra || a.Key == KeyNode || a == in.Cause.Attr {
				continue
			}
			if groups[a] == nil {
				values = append(values, a)
			}
			groups[a] = append(groups[a], in)
		}
	}
	var best Cause
	found := false
	tested := 0
	for _, a := range values {
		if len(groups[a]) >= 2 {
			tested++
		}
	}
	for _, a := range values {
		if len(groups[a]) < 2 {
			continue
		}
		in := map[string]bool{}
		for _, g := range groups[a] {
			for n := range g.nodes {
				in[n] = true
			}
		}
		for _, s := range e.pending {
			if n := s.attr(KeyNode); n != "" && s.has(a) {
				in[n] = true
			}
		}
		key, _ := e.policy.key(a.Key)
		c := nodeCause(a, key, len(in), len(troubled), e.census, tested)
		if c.admissible(e.policy) && (!found || better(c, best, e.policy)) {
			best, found = c, true
		}
	}
	if !found {
		return Change{}, false
	}
	group := groups[best.Attr]
	matched := e.takePending(best.Attr)
	target := group[0]
	names := make([]string, 0, len(group))
	for _, g := range group {
		names = append(names, g.Cause.String())
	}
	detail := fmt.Sprintf("%s → %s: %s", joinAnd(names), best, best.Evidence())
	e.absorbAll(target, group[1:], best, matched)
	return Change{Kind: Merged, Incident: target.Snapshot(), Detail: detail}, true
}

// takePending removes the waiting signals that carry a and returns them.
func (e *Engine) takePending(a Attr) []Signal {
	var taken []Signal
	e.pending = slices.DeleteFunc(e.pending, func(s Signal) bool {
		if s.has(a) {
			taken = append(taken, s)
			return true
		}
		return false
	})
	return taken
}

// absorbAll makes target the incident of cause c: the others merge into it
// and close, and the matched waiting signals join it.
func (e *Engine) absorbAll(target *Incident, others []*Incident, c Cause, matched []Signal) {
	from := target.Cause
	for _, o := range others {
		target.absorb(o, e.policy)
		o.MergedInto = target.ID
		e.close(o, target.Last, "merged into "+target.ID)
	}
	for _, s := range matched {
		e.join(target, s)
	}
	target.Cause = c
	target.Alternatives = slices.DeleteFunc(target.Alternatives, func(a Cause) bool { return a.Attr == c.Attr })
	target.History = append(target.History, fmt.Sprintf("%s → %s: %s", from, c, c.Evidence()))
	delete(e.grown, target) // reported as widened or merged, not as grown
}

// close ends an open incident at the given time.
func (e *Engine) close(in *Incident, at time.Time, why string) Change {
	in.Closed = at
	in.History = append(in.History, "closed: "+why)
	e.open = slices.DeleteFunc(e.open, func(o *Incident) bool { return o == in })
	delete(e.grown, in)
	e.closed = append(e.closed, in)
	if over := len(e.closed) - e.policy.MaxClosed; over > 0 {
		for _, old := range e.closed[:over] {
			delete(e.byID, old.ID)
		}
		e.closed = slices.Delete(e.closed, 0, over)
	}
	return Change{Kind: Closed, Incident: in.Snapshot(), Detail: why}
}

func (e *Engine) uniqueID(id string) string {
	if e.byID[id] == nil {
		return id
	}
	for i := 2; ; i++ {
		if c := fmt.Sprintf("%s-%d", id, i); e.byID[c] == nil {
			return c
		}
	}
}

// Open returns copies of the open incidents, oldest first.
func (e *Engine) Open() []Incident {
	out := make([]Incident, len(e.open))
	for i, in := range e.open {
		out[i] = in.Snapshot()
	}
	return out
}

// Closed returns copies of the closed incidents kept, oldest first.
func (e *Engine) Closed() []Incident {
	out := make([]Incident, len(e.closed))
	for i, in := range e.closed {
		out[i] = in.Snapshot()
	}
	return out
}

// Get returns a copy of the incident with the ID, open or kept closed.
func (e *Engine) Get(id string) (Incident, bool) {
	in := e.byID[id]
	if in == nil {
		return Incident{}, false
	}
	return in.Snapshot(), true
}

// IncidentOf returns the ID of the incident a signal's reference (an event
// ID) belongs to, following merges; false when none or forgotten.
func (e *Engine) IncidentOf(ref string) (string, bool) {
	id, ok := e.links[ref]
	for hops := 0; ok && hops < maxRounds; hops++ {
		in := e.byID[id]
		if in == nil || in.MergedInto == "" {
			break
		}
		id = in.MergedInto
	}
	return id, ok
}

// Explain returns the open infrastructure incident whose cause s carries
// (the narrowest), if any: s's trouble is that domain's, not its
// workload's. The rollout guard asks before blaming a version.
func (e *Engine) Explain(s Signal) (Incident, bool) {
	var best *Incident
	for _, in := range e.open {
		if in.Cause.Infra && s.has(in.Cause.Attr) && (best == nil || in.Cause.Share < best.Cause.Share) {
			best = in
		}
	}
	if best == nil {
		return Incident{}, false
	}
	return best.Snapshot(), true
}

// Pending is how many signals wait unexplained; Dropped how many left
// unexplained (waited Window in vain, or past MaxPending).
func (e *Engine) Pending() int { return len(e.pending) }

// Dropped counts the signals that left unexplained.
func (e *Engine) Dropped() int { return e.dropped }

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	out := xs[0]
	for _, x := range xs[1 : len(xs)-1] {
		out += ", " + x
	}
	return out + " and " + xs[len(xs)-1]
}
