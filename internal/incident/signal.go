package incident

import (
	"errors"
	"fmt"
	"time"
)

// Kind is what happened to a signal's subject.
type Kind string

// The kinds of trouble the engine groups.
const (
	Failed        Kind = "failed"         // an allocation failed
	OOMKilled     Kind = "oom-killed"     // a task was killed for memory
	Restarted     Kind = "restarted"      // a task restarted
	CheckFailing  Kind = "check-failing"  // a health check turned failing
	Unhealthy     Kind = "unhealthy"      // an allocation turned unhealthy
	Lost          Kind = "lost"           // an allocation was lost with its node
	NodeDown      Kind = "node-down"      // a node went down
	SlowPlacement Kind = "slow-placement" // a group waited long to be placed, or fit nowhere
)

// Kinds lists every kind, in the order summaries count them.
var Kinds = []Kind{Failed, OOMKilled, Restarted, CheckFailing, Unhealthy, Lost, NodeDown, SlowPlacement}

// Unit is what a kind of signal is about; shares are counted per unit.
type Unit string

// The units the census counts.
const (
	UnitAlloc     Unit = "allocation"
	UnitNode      Unit = "node"
	UnitPlacement Unit = "placement"
)

// Units lists the units in a fixed order (tests combine them in it).
var Units = []Unit{UnitAlloc, UnitNode, UnitPlacement}

// Unit returns the unit the kind is about.
func (k Kind) Unit() Unit {
	switch k {
	case NodeDown:
		return UnitNode
	case SlowPlacement:
		return UnitPlacement
	}
	return UnitAlloc
}

func (k Kind) known() bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Attr is one thing a subject shares with others: its node, rack, power
// zone, switch, workload, version, deployment or driver. Keys are the
// Policy's; values are as the caller names them ("r7", "web@v2").
type Attr struct {
	Key   string
	Value string
}

func (a Attr) String() string { return a.Key + " " + a.Value }

// Signal is one piece of trouble.
type Signal struct {
	Time time.Time
	Kind Kind
	// Subject names what the signal is about, unique within its unit: an
	// allocation's ID, a node's name, a group ("ns/web/api"). Repeated
	// signals of one subject (a task restarting again and again) count
	// once in the tests.
	Subject string
	// Attrs are what the subject shares with others, at most one value
	// per key. Signals about allocations and nodes carry Attr{"node", …}:
	// the engine counts nodes by it.
	Attrs []Attr
	// Ref names the event the signal came from, so that events link to
	// their incident (Engine.IncidentOf); may be empty.
	Ref string
}

// ErrBadSignal is returned by Observe for a signal without a known kind,
// a subject or a time: the caller built it wrong.
var ErrBadSignal = errors.New("incident: bad signal")

func (s Signal) check() error {
	switch {
	case !s.Kind.known():
		return fmt.Errorf("%w: unknown kind %q", ErrBadSignal, s.Kind)
	case s.Subject == "":
		return fmt.Errorf("%w: %s signal without a subject", ErrBadSignal, s.Kind)
	case s.Time.IsZero():
		return fmt.Errorf("%w: %s signal of %s without a time", ErrBadSignal, s.Kind, s.Subject)
	}
	return nil
}

// attr returns the signal's value for key, "" when it has none.
func (s Signal) attr(key string) string {
	for _, a := range s.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

func (s Signal) has(a Attr) bool { return a.Value != "" && s.attr(a.Key) == a.Value }
