package incident

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Incident is trouble that shares a cause. The engine owns the live
// incidents; callers get copies (Snapshot).
type Incident struct {
	// ID is derived from when it began and its first cause
	// ("20250105T120301-rack-r7"), so a leader that rebuilds incidents
	// from the same events gives them the same names.
	ID    string
	Cause Cause
	// Alternatives are the next best admissible causes when it opened
	// (at most three), for the reader who knows better.
	Alternatives []Cause
	// Began and Last are the times of its first and latest signal;
	// Closed is when it closed (zero while open).
	Began, Last, Closed time.Time
	// MergedInto names the incident that absorbed this one, if any.
	MergedInto string
	// Signals counts every signal that joined; Kinds per kind.
	Signals int
	Kinds   map[Kind]int
	// Subjects counts the distinct troubled subjects per unit, Nodes the
	// distinct nodes, Workloads the distinct workloads; past the policy's
	// MaxTracked they are lower bounds.
	Subjects  map[Unit]int
	Nodes     int
	Workloads int
	// Refs are the references (event IDs) of its first MaxRefs signals.
	Refs []string
	// History says how it changed: opened, widened, merged, closed.
	History []string

	tracked   subjects
	nodes     map[string]bool
	workloads map[string]bool
	// common are the attributes every signal of the incident carries: a
	// wider domain that contains them all may absorb it.
	common []Attr
}

func newIncident(c Cause, alternatives []Cause) *Incident {
	return &Incident{
		Cause: c, Alternatives: alternatives,
		Kinds: map[Kind]int{}, Subjects: map[Unit]int{},
		tracked: subjects{}, nodes: map[string]bool{}, workloads: map[string]bool{},
	}
}

// Open reports whether the incident is still open.
func (in *Incident) Open() bool { return in.Closed.IsZero() }

// add joins s to the incident, within the bounds of p.
func (in *Incident) add(s Signal, p Policy) {
	if in.Signals == 0 {
		in.Began, in.common = s.Time, slices.Clone(s.Attrs)
	} else {
		in.common = intersect(in.common, s.Attrs)
	}
	if s.Time.Before(in.Began) {
		in.Began = s.Time
	}
	if s.Time.After(in.Last) {
		in.Last = s.Time
	}
	in.Signals++
	in.Kinds[s.Kind]++
	u := s.Kind.Unit()
	if !in.tracked[u][s.Subject] && len(in.tracked[u]) < p.MaxTracked {
		in.tracked.add(u, s.Subject)
		in.Subjects[u]++
	}
	if n := s.attr(KeyNode); n != "" && !in.nodes[n] && len(in.nodes) < p.MaxTracked {
		in.nodes[n] = true
		in.Nodes++
	}
	if w := s.attr(KeyWorkload); w != "" && !in.workloads[w] && len(in.workloads) < p.MaxTracked {
		in.workloads[w] = true
		in.Workloads++
	}
	if s.Ref != "" && len(in.Refs) < p.MaxRefs {
		in.Refs = append(in.Refs, s.Ref)
	}
}

// absorb moves other's evidence into in (a merge).
func (in *Incident) absorb(other *Incident, p Policy) {
	in.common = intersect(in.common, other.common)
	if other.Began.Before(in.Began) {
		in.Began = other.Began
	}
	if other.Last.After(in.Last) {
		in.Last = other.Last
	}
	in.Signals += other.Signals
	for k, n := range other.Kinds {
		in.Kinds[k] += n
	}
	for _, u := range Units {
		for _, s := range sortedSet(other.tracked[u]) {
			if !in.tracked[u][s] && len(in.tracked[u]) < p.MaxTracked {
				in.tracked.add(u, s)
				in.Subjects[u]++
			}
		}
	}
	for _, n := range sortedSet(other.nodes) {
		if !in.nodes[n] && len(in.nodes) < p.MaxTracked {
			in.nodes[n] = true
			in.Nodes++
		}
	}
	for _, w := range sortedSet(other.workloads) {
		if !in.workloads[w] && len(in.workloads) < p.MaxTracked {
			in.workloads[w] = true
			in.Workloads++
		}
	}
	for _, r := range other.Refs {
		if len(in.Refs) < p.MaxRefs {
			in.Refs = append(in.Refs, r)
		}
	}
}

// carries reports whether every signal of the incident carries a.
func (in *Incident) carries(a Attr) bool { return slices.Contains(in.common, a) }

// Snapshot returns a copy that shares nothing with the engine.
func (in *Incident) Snapshot() Incident {
	c := *in
	c.Alternatives = slices.Clone(in.Alternatives)
	c.Kinds = make(map[Kind]int, len(in.Kinds))
	for k, n := range in.Kinds {
		c.Kinds[k] = n
	}
	c.Subjects = make(map[Unit]int, len(in.Subjects))
	for u, n := range in.Subjects {
		c.Subjects[u] = n
	}
	c.Refs = slices.Clone(in.Refs)
	c.History = slices.Clone(in.History)
	c.tracked, c.nodes, c.workloads, c.common = nil, nil, nil, slices.Clone(in.common)
	return c
}

// Summary is the incident in one line: "12 allocations on 3 nodes of
// rack r7 failed within 40 s: rack r7".
func (in *Incident) Summary() string {
	var parts []string
	if n := in.Subjects[UnitNode]; n > 0 {
		parts = append(parts, in.phrase(UnitNode, n))
	}
	if n := in.Subjects[UnitAlloc]; n > 0 {
		parts = append(parts, in.phrase(UnitAlloc, n))
	}
	if n := in.Subjects[UnitPlacement]; n > 0 {
		parts = append(parts, in.phrase(UnitPlacement, n))
	}
	return fmt.Sprintf("%s %s: %s", strings.Join(parts, ", "), within(in.Last.Sub(in.Began)), in.Cause)
}

// phrase words the trouble of one unit: "12 allocations on 3 nodes of
// rack r7 failed", "2 allocations of web@v2 on 2 nodes were OOM-killed".
func (in *Incident) phrase(u Unit, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", n, plural(n, nounOf(u)))
	if !in.Cause.Infra && u != UnitNode {
		b.WriteString(" of " + in.Cause.Value)
	}
	if u == UnitAlloc {
		if in.Nodes == 1 {
			if node, ok := commonValue(in.common, KeyNode); ok {
				b.WriteString(" on node " + node)
			} else {
				b.WriteString(" on 1 node")
			}
		} else if in.Nodes > 1 {
			fmt.Fprintf(&b, " on %d nodes", in.Nodes)
		}
	}
	if in.Cause.Infra && in.Cause.Key != KeyNode && u != UnitPlacement {
		b.WriteString(" of " + in.Cause.String())
	}
	var kinds []Kind
	for _, k := range Kinds {
		if k.Unit() == u && in.Kinds[k] > 0 {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 1 {
		b.WriteString(" " + verb(kinds[0], n))
		return b.String()
	}
	var counts []string
	for _, k := range kinds {
		counts = append(counts, fmt.Sprintf("%d %s", in.Kinds[k], verb(k, 2)))
	}
	fmt.Fprintf(&b, " %s in trouble (%s)", map[bool]string{true: "was", false: "were"}[n == 1], strings.Join(counts, ", "))
	return b.String()
}

func nounOf(u Unit) string {
	if u == UnitPlacement {
		return "group"
	}
	return string(u)
}

// verb words a kind for n subjects ("failed", "was OOM-killed").
func verb(k Kind, n int) string {
	be := "were"
	if n == 1 {
		be = "was"
	}
	switch k {
	case OOMKilled:
		return be + " OOM-killed"
	case CheckFailing:
		return "failed health checks"
	case Unhealthy:
		return "turned unhealthy"
	case Lost:
		return be + " lost"
	case NodeDown:
		return "went down"
	case SlowPlacement:
		return be + " slow to place"
	}
	return string(k)
}

// within words a span: "at once", "within 40 s", "within 12 min".
func within(d time.Duration) string {
	if d < time.Second {
		return "at once"
	}
	return "within " + span(d)
}

// span words a duration: "40 s", "12 min", "2.5 h".
func span(d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	}
	return fmt.Sprintf("%.1f h", d.Hours())
}

func intersect(a, b []Attr) []Attr {
	out := a[:0:0]
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func commonValue(attrs []Attr, key string) (string, bool) {
	for _, a := range attrs {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// incidentID derives an ID from the incident's start and cause, with
// anything but letters, digits, dots and dashes made a dash.
func incidentID(began time.Time, c Cause) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
				return r
			}
			return '-'
		}, s)
	}
	return began.UTC().Format("20060102T150405") + "-" + clean(c.Key) + "-" + clean(c.Value)
}
