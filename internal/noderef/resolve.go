package noderef

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/strata-dev/strata/api"
)

// ErrNotFound is wrapped by the error for a reference no node matches.
var ErrNotFound = errors.New("not found")

// AmbiguousError is a reference that several nodes match.
type AmbiguousError struct {
	Ref string
	// ByName is true when the nodes share the name Ref, false when Ref is
	// a prefix of each one's id.
	ByName     bool
	Candidates []*api.Node // sorted by id
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	if e.ByName {
		fmt.Fprintf(&b, "node name %q is ambiguous: %d nodes have it; name one by its id (a unique prefix is enough):", e.Ref, len(e.Candidates))
	} else {
		fmt.Fprintf(&b, "node id prefix %q is ambiguous: %d nodes match; give more of the id:", e.Ref, len(e.Candidates))
	}
	for _, n := range e.Candidates {
		fmt.Fprintf(&b, " %s (%s, %s)", n.ID, n.Name, n.Status)
		if n.HTTPAddr != "" {
			b.WriteString(" at " + n.HTTPAddr)
		}
		b.WriteByte(';')
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Resolve returns the one node ref names among nodes: the node whose id is
// ref, else the node named ref, else the node whose id starts with ref.
// Several nodes of that name, or several ids with that prefix, give an
// *AmbiguousError; none gives an error wrapping ErrNotFound.
func Resolve(nodes []*api.Node, ref string) (*api.Node, error) {
	if ref == "" {
		return nil, fmt.Errorf("node %w: no id or name given", ErrNotFound)
	}
	var named, prefixed []*api.Node
	for _, n := range nodes {
		switch {
		case n.ID == ref:
			return n, nil
		case n.Name == ref:
			named = append(named, n)
		case strings.HasPrefix(n.ID, ref):
			prefixed = append(prefixed, n)
		}
	}
	switch {
	case len(named) == 1:
		return named[0], nil
	case len(named) > 1:
		return nil, ambiguous(ref, true, named)
	case len(prefixed) == 1:
		return prefixed[0], nil
	case len(prefixed) > 1:
		return nil, ambiguous(ref, false, prefixed)
	}
	return nil, fmt.Errorf("node %q %w (give its id, a unique prefix of it, or its name: strata nodes lists them)", ref, ErrNotFound)
}

func ambiguous(ref string, byName bool, nodes []*api.Node) *AmbiguousError {
	sorted := append([]*api.Node(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	return &AmbiguousError{Ref: ref, ByName: byName, Candidates: sorted}
}

// NameHolder returns a node other than id that has name, nil if none:
// an agent choosing its default name asks it.
func NameHolder(nodes []*api.Node, name, id string) *api.Node {
	for _, n := range nodes {
		if n.Name == name && n.ID != id {
			return n
		}
	}
	return nil
}
